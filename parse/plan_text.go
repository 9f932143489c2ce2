package parse

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// PlanNotText refuses (reason engine.RefuseInvalidInput, with the line)
// a plan that is not UTF-8 text: UTF-16, not valid UTF-8, or binary (a
// NUL byte, or control characters making up more than a tenth of the
// characters). It reads only the first limit bytes of src, so a front end
// may hand it the start of a file too large to read whole; a character
// cut at that end is not a fault. nil means text, as far as it read.
func PlanNotText(src []byte, name string, limit int) *engine.Refusal {
	head := src
	if limit > 0 && len(head) > limit {
		head = planWholeRunes(head[:limit])
	}
	off, msg := planNotText(head)
	if msg == "" {
		return nil
	}
	return &engine.Refusal{
		Reason:  engine.RefuseInvalidInput,
		Source:  name,
		Line:    planLineAt(src, off),
		Message: msg,
	}
}

// planNotText says why head is not UTF-8 text, and at which offset, or
// returns "" when it is.
func planNotText(head []byte) (int, string) {
	if bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff}) {
		return 0, "the plan is UTF-16 text; save it as UTF-8 and try again"
	}
	skip := 0
	if bytes.HasPrefix(head, planBOM) {
		skip = len(planBOM)
	}
	body := head[skip:]
	if i := bytes.IndexByte(body, 0); i >= 0 {
		return skip + i, "the plan is not a text file: it contains a NUL byte, as binary files do"
	}
	if !utf8.Valid(body) {
		i := planFirstInvalid(body)
		return skip + i, fmt.Sprintf("the plan is not valid UTF-8 (byte 0x%02x is not part of a UTF-8 character); save it as UTF-8 text", body[i])
	}
	if first, controls, chars := planControls(body); controls*10 > chars {
		return skip + first, fmt.Sprintf("the plan is not a text file: %d of its %d characters are control characters, as in a binary file", controls, chars)
	}
	return 0, ""
}

// planWholeRunes is b without a UTF-8 character cut at its end.
func planWholeRunes(b []byte) []byte {
	for n := 1; n < utf8.UTFMax && n <= len(b); n++ {
		if c := b[len(b)-n]; utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRune(b[len(b)-n:]) {
				return b[:len(b)-n]
			}
			break
		}
	}
	return b
}
