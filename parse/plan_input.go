package parse

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

var planBOM = []byte("\xef\xbb\xbf")

// planCheckInput refuses input that is not a readable text document.
func planCheckInput(src []byte, name string, limit int) *engine.Refusal {
	// Not text first: a binary file is refused as one whatever its size,
	// since raising the limit would not make it a plan.
	if r := PlanNotText(src, name, limit); r != nil {
		return r
	}
	refuse := func(format string, args ...any) *engine.Refusal {
		return &engine.Refusal{Reason: engine.RefuseInvalidInput, Source: name, Line: 1, Message: fmt.Sprintf(format, args...)}
	}
	if len(src) > limit {
		return refuse("the plan is %s, over the %s limit; raise the limit with --max-plan-bytes or GONOGO_MAX_PLAN_BYTES",
			planSize(len(src)), planSize(limit))
	}
	body := bytes.TrimPrefix(src, planBOM)
	if len(body) == 0 {
		return refuse("the plan is empty")
	}
	if planBlank(body) {
		return refuse("the plan contains only whitespace")
	}
	return nil
}

// planLineAt is the 1-based line of byte offset off, counting LF, CRLF and a
// lone CR as one line end each, the same way planNormalize rewrites them.
func planLineAt(src []byte, off int) int {
	off = min(off, len(src))
	line := 1
	for i := 0; i < off; i++ {
		switch src[i] {
		case '\n':
			line++
		case '\r':
			if i+1 >= len(src) || src[i+1] != '\n' {
				line++
			}
		}
	}
	return line
}

func planFirstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// planBlank reports whether b holds only white space and byte order marks.
func planBlank(b []byte) bool {
	return bytes.IndexFunc(b, planNotBlank) < 0
}

func planNotBlank(r rune) bool {
	return !unicode.IsSpace(r) && r != '\ufeff'
}

// planControls counts the control characters of valid UTF-8 text other than
// tab, line feed, form feed and carriage return (C0, DEL and C1), the
// characters of the text, and where the first control character is.
func planControls(b []byte) (first, controls, chars int) {
	first = -1
	for i := range b {
		if !planControlAt(b, i) {
			continue
		}
		controls++
		if first < 0 {
			first = i
		}
	}
	if controls == 0 {
		return 0, 0, len(b)
	}
	return first, controls, utf8.RuneCount(b)
}

// planControlAt reports whether a control character starts at b[i].
func planControlAt(b []byte, i int) bool {
	c := b[i]
	if c == 0xc2 {
		return i+1 < len(b) && b[i+1] <= 0x9f
	}
	return planControlByte[c]
}

// planControlByte marks the bytes that start a control character; 0xc2
// starts one only when a byte from 0x80 to 0x9f follows (C1).
var planControlByte = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c != '\t' && c != '\n' && c != '\f' && c != '\r'
	}
	t[0x7f], t[0xc2] = true, true
	return t
}()

func planSize(n int) string {
	unit := func(v float64, u string) string {
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + u
	}
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%s (%d bytes)", strings.Replace(unit(float64(n)/(1<<20), "MiB"), ".0 ", " ", 1), n)
	case n >= 1<<10:
		return fmt.Sprintf("%s (%d bytes)", strings.Replace(unit(float64(n)/(1<<10), "KiB"), ".0 ", " ", 1), n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// planNormalize drops a byte order mark and rewrites what chat clients and
// editors put into pasted text: CRLF and CR become LF, non-breaking spaces
// become spaces. The line count never changes, so lines of the result are
// lines of the file. src itself is never modified.
func planNormalize(src []byte) []byte {
	src = bytes.TrimPrefix(src, planBOM)
	if bytes.IndexByte(src, '\r') < 0 && !bytes.Contains(src, []byte("\u00a0")) && !bytes.Contains(src, []byte("\u202f")) {
		return src
	}
	return []byte(planPasted.Replace(string(src)))
}

// planPasted rewrites pasted line ends and spaces; CRLF comes before CR so
// that it becomes one line end, not two.
var planPasted = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u00a0", " ", "\u202f", " ")

var planYAMLKeyRE = regexp.MustCompile(`^[A-Za-z0-9_"'][^:]*:(\s|$)`)

// planFrontMatter returns the length of the YAML front matter at the top of
// t, or 0. A "---" line followed by something that is not a YAML key is a
// thematic break, not front matter, so a plan that opens with a rule keeps
// its first section.
func planFrontMatter(t []byte) int {
	line, off := planNextLine(t, 0)
	if string(bytes.TrimRight(line, " \t")) != "---" {
		return 0
	}
	return planFrontMatterEnd(t, off)
}

// planFrontMatterEnd returns the offset after the line closing front
// matter whose first line after "---" starts at off, or 0 when there is no
// such line or no YAML key comes before it.
func planFrontMatterEnd(t []byte, off int) int {
	sawKey := false
	for off < len(t) {
		line, next := planNextLine(t, off)
		s := bytes.TrimRight(line, " \t")
		switch {
		case string(s) == "---" || string(s) == "...":
			if sawKey {
				return next
			}
			return 0
		case !sawKey && len(bytes.TrimSpace(s)) > 0:
			if !planYAMLKeyRE.Match(s) {
				return 0
			}
			sawKey = true
		}
		off = next
	}
	return 0
}

// planNextLine returns the line starting at off (without its LF) and the
// offset of the line after it.
func planNextLine(t []byte, off int) ([]byte, int) {
	i := bytes.IndexByte(t[off:], '\n')
	if i < 0 {
		return t[off:], len(t)
	}
	return t[off : off+i], off + i + 1
}

func planLineStarts(t []byte) []int {
	starts := make([]int, 1, bytes.Count(t, []byte{'\n'})+1)
	for off := 0; ; {
		i := bytes.IndexByte(t[off:], '\n')
		if i < 0 {
			return starts
		}
		off += i + 1
		starts = append(starts, off)
	}
}
