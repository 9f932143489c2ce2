package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain text is kept", "# PRD\n\n\tindented, ünïcödé 字 😀", "# PRD\n\n\tindented, ünïcödé 字 😀"},
		{"erase line", "done\x1b[2Kforged", "done␛[2Kforged"},
		{"hidden text", "ok \x1b[8msecret\x1b[0m", "ok ␛[8msecret␛[0m"},
		{"OSC 52 clipboard write, BEL-ended", "\x1b]52;c;Y3VybCBldmlsfHNo\x07", "␛]52;c;Y3VybCBldmlsfHNo␇"},
		{"OSC 52, ST-ended", "\x1b]52;c;eA==\x1b\\", "␛]52;c;eA==␛\\"},
		{"CRLF line ends", "a\r\nb\r\n", "a\nb\n"},
		{"a lone carriage return would overwrite the line", "approve me\rREJECTED", "approve me␍REJECTED"},
		{"NUL, backspace, form feed, DEL", "a\x00b\x08c\x0cd\x7f", "a␀b␈c␌d␡"},
		{"C1 CSI and NEL", "x\u009b2Ky\u0085z", "x<U+009B>2Ky<U+0085>z"},
		{"bidi override and isolate", "invoice \u202egnp.exe \u2066x\u2069", "invoice <U+202E>gnp.exe <U+2066>x<U+2069>"},
		{"line separator", "a\u2028b", "a<U+2028>b"},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"a raw C1 byte is invalid UTF-8", "a\x9b2K", "a\uFFFD2K"},
		{"byte order mark", "\ufeff# Title", "# Title"},
		{"bidi marks that reorder nothing are kept", "a\u200eb\u200fc", "a\u200eb\u200fc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Printable(tt.in); got != tt.want {
				t.Errorf("Printable(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// checkPrintable fails when s holds anything a terminal acts on.
func checkPrintable(t testing.TB, in, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("Printable(%q) = %q: not valid UTF-8", in, s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || shownAsCode(r) || r == 0xfeff {
			t.Fatalf("Printable(%q) = %q keeps U+%04X", in, s, r)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2K\x1b[8m\x1b]52;c;eA==\x07", "a\r\nb\rc", "\u009b\u202e\ufeff\xff", "\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Printable(in)
		checkPrintable(t, in, out)
		if again := Printable(out); again != out {
			t.Fatalf("Printable is not idempotent on %q: %q then %q", in, out, again)
		}
		if strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("Printable(%q) = %q changed the lines", in, out)
		}
	})
}

// Text with nothing to change costs a scan and no copy.
func BenchmarkPrintable(b *testing.B) {
	clean := strings.Repeat("A line of an ordinary artifact, with ünïcödé.\n", 20000)
	dirty := clean + "\x1b[2K"
	b.Run("clean", func(b *testing.B) {
		b.SetBytes(int64(len(clean)))
		for b.Loop() {
			Printable(clean)
		}
	})
	b.Run("dirty", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		for b.Loop() {
			Printable(dirty)
		}
	})
}
