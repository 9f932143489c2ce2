package parse

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gonogo/gonogo/engine"
)

// FuzzChain checks that any input either parses into at least one valid
// skill name or is refused with an *engine.Refusal on line 1; never a panic.
func FuzzChain(f *testing.F) {
	for _, seed := range []string{
		"deliver-prd -> deliver-user-stories --thread -- mobile checkout",
		"deliver-prd, deliver-user-stories mobile checkout redesign",
		"a then b, then c → d",
		"a -> --thread b --auto ctx --dry-run",
		"a ->",
		"a, then",
		"-- ctx",
		"“a” , `b` ‘c’",
		"a --foo",
		"a —dry-run –thread b",
		"a\u00a0->\u200bb\tctx\n--",
		"../x -> a/b",
		"\"a -> b ctx\"",
		"a-->b --> c",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		got, err := Chain(expr)
		if err != nil {
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Chain(%q): error %T %v is not an *engine.Refusal", expr, err, err)
			}
			if r.Line != 1 || r.Source != expr || r.Reason == "" || r.Message == "" {
				t.Fatalf("Chain(%q): refusal %+v lacks line 1, source, reason or message", expr, r)
			}
			return
		}
		if len(got.Names) == 0 {
			t.Fatalf("Chain(%q) accepted with no names", expr)
		}
		for _, n := range got.Names {
			if !engine.ValidSkillName(n) || n == "then" {
				t.Fatalf("Chain(%q) accepted invalid name %q", expr, n)
			}
		}
		if got.Context != chainTrimSpace(got.Context) {
			t.Fatalf("Chain(%q): context %q is not trimmed", expr, got.Context)
		}
		// A flag is cut with the space before it, so the separator after
		// it joins the word before it ("b --thread, c" leaves "b, c"): the
		// first word, less the separators that may end it, is written so.
		first := strings.TrimRight(chainFirstWord(got.Context), ",→->")
		if !utf8.ValidString(got.Context) || (got.Context != "" && !strings.Contains(expr, first)) {
			t.Fatalf("Chain(%q): context %q does not come from the expression", expr, got.Context)
		}
	})
}

func chainFirstWord(s string) string {
	if i := strings.IndexFunc(s, chainIsSpace); i >= 0 {
		return s[:i]
	}
	return s
}
