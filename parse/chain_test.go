package parse

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gonogo/gonogo/engine"
)

func TestChain(t *testing.T) {
	type want struct {
		names []string
		flags engine.Flags
		ctx   string
	}
	tests := []struct {
		name string
		expr string
		want want
	}{
		// The examples of the Mode B contract and the chain command.
		{"contract thread example", "define-problem-statement -> define-hypothesis --thread Mobile checkout drop-off",
			want{[]string{"define-problem-statement", "define-hypothesis"}, engine.Flags{Thread: true}, "Mobile checkout drop-off"}},
		{"lowercase context looks like names", "deliver-prd, deliver-user-stories mobile checkout redesign",
			want{[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{}, "mobile checkout redesign"}},
		{"design example with explicit context", "deliver-prd -> deliver-user-stories --thread -- mobile checkout",
			want{[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{Thread: true}, "mobile checkout"}},
		{"prose then", "deliver-prd then deliver-user-stories",
			want{[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{}, ""}},

		// Separators.
		{"single step", "deliver-prd", want{[]string{"deliver-prd"}, engine.Flags{}, ""}},
		{"single step with context", "deliver-prd spec the post-send fix",
			want{[]string{"deliver-prd"}, engine.Flags{}, "spec the post-send fix"}},
		{"comma without spaces", "a,b,c", want{[]string{"a", "b", "c"}, engine.Flags{}, ""}},
		{"arrow without spaces", "a->b", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"arrow space after only", "a ->b", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"arrow space before only", "a-> b", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"mixed separators", "a, b -> c then d", want{[]string{"a", "b", "c", "d"}, engine.Flags{}, ""}},
		{"unicode arrow", "a → b→c", want{[]string{"a", "b", "c"}, engine.Flags{}, ""}},
		{"then any case", "a THEN b Then c", want{[]string{"a", "b", "c"}, engine.Flags{}, ""}},
		{"comma then reads as one separator", "a, then b", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"dash before arrow stays in the name", "a-->b", want{[]string{"a-", "b"}, engine.Flags{}, ""}},
		{"duplicates kept", "deliver-prd -> deliver-prd", want{[]string{"deliver-prd", "deliver-prd"}, engine.Flags{}, ""}},
		{"many steps not capped", "a,b,c,d,e,f,g", want{[]string{"a", "b", "c", "d", "e", "f", "g"}, engine.Flags{}, ""}},
		{"names with digits", "okr-2026, 3d-review", want{[]string{"okr-2026", "3d-review"}, engine.Flags{}, ""}},

		// Flags.
		{"all flags", "--auto --force-auto --dry-run --thread a",
			want{[]string{"a"}, engine.Flags{Auto: true, ForceAuto: true, DryRun: true, Thread: true}, ""}},
		{"flag between separator and name", "a -> --thread b",
			want{[]string{"a", "b"}, engine.Flags{Thread: true}, ""}},
		{"flag between name and separator", "a --dry-run -> b ctx",
			want{[]string{"a", "b"}, engine.Flags{DryRun: true}, "ctx"}},
		{"flag inside context is cut out", "a, b mobile --auto checkout",
			want{[]string{"a", "b"}, engine.Flags{Auto: true}, "mobile checkout"}},
		{"flag after context", "a, b mobile checkout --thread",
			want{[]string{"a", "b"}, engine.Flags{Thread: true}, "mobile checkout"}},
		{"repeated flag", "--thread a --thread", want{[]string{"a"}, engine.Flags{Thread: true}, ""}},
		{"em dash flag", "a —dry-run -> b", want{[]string{"a", "b"}, engine.Flags{DryRun: true}, ""}},
		{"en dash flag", "a –thread b", want{[]string{"a"}, engine.Flags{Thread: true}, "b"}},
		{"flags after -- are context", "a -- run --auto now --foo",
			want{[]string{"a"}, engine.Flags{}, "run --auto now --foo"}},
		{"-- inside implicit context ends flag extraction", "a fix it -- --thread",
			want{[]string{"a"}, engine.Flags{}, "fix it -- --thread"}},
		{"flag before --", "a --thread -- ctx", want{[]string{"a"}, engine.Flags{Thread: true}, "ctx"}},
		{"dash rule is context text", "a notes --- more", want{[]string{"a"}, engine.Flags{}, "notes --- more"}},
		{"em dash word is context text", "a — urgent", want{[]string{"a"}, engine.Flags{}, "— urgent"}},

		// Context.
		{"explicit empty context", "a -> b --", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"context keeps separators and names", "a then b c, d -> e",
			want{[]string{"a", "b"}, engine.Flags{}, "c, d -> e"}},
		{"context keeps line breaks", "a -> b\nline one\nline two\n",
			want{[]string{"a", "b"}, engine.Flags{}, "line one\nline two"}},
		{"context keeps quotes", `a, b "mobile" checkout`,
			want{[]string{"a", "b"}, engine.Flags{}, `"mobile" checkout`}},
		{"explicit context after --", "a, b -- c, d", want{[]string{"a", "b"}, engine.Flags{}, "c, d"}},

		// Slack text.
		{"nbsp and tabs", "a\u00a0->\tb\u00a0ctx", want{[]string{"a", "b"}, engine.Flags{}, "ctx"}},
		{"newlines between steps", "a\n->\nb", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"zero width space", "a\u200b,\u200bb", want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"smart quotes around names", "“deliver-prd” → ‘deliver-user-stories’ ctx",
			want{[]string{"deliver-prd", "deliver-user-stories"}, engine.Flags{}, "ctx"}},
		{"backticks around names", "`a` -> `b` ctx", want{[]string{"a", "b"}, engine.Flags{}, "ctx"}},
		{"whole expression quoted", `"a -> b mobile checkout"`,
			want{[]string{"a", "b"}, engine.Flags{}, "mobile checkout"}},
		{"whole expression smart quoted", "“a, b --thread ctx”",
			want{[]string{"a", "b"}, engine.Flags{Thread: true}, "ctx"}},
		{"stray quote is whitespace", `a, " b`, want{[]string{"a", "b"}, engine.Flags{}, ""}},
		{"surrounding whitespace", "  \n a ,  b  \t", want{[]string{"a", "b"}, engine.Flags{}, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Chain(tt.expr)
			if err != nil {
				t.Fatalf("Chain(%q): %v", tt.expr, err)
			}
			if got.Source != tt.expr {
				t.Errorf("Source = %q, want %q", got.Source, tt.expr)
			}
			if !reflect.DeepEqual(got.Names, tt.want.names) {
				t.Errorf("Names = %q, want %q", got.Names, tt.want.names)
			}
			if got.Flags != tt.want.flags {
				t.Errorf("Flags = %+v, want %+v", got.Flags, tt.want.flags)
			}
			if got.Context != tt.want.ctx {
				t.Errorf("Context = %q, want %q", got.Context, tt.want.ctx)
			}
		})
	}
}

func TestChainRefusals(t *testing.T) {
	tests := []struct {
		name   string
		expr   string
		reason engine.RefusalReason
		msg    string // a fragment the message must carry
	}{
		{"trailing arrow", "a ->", engine.RefuseTrailingSeparator, `"->" at column 3`},
		{"trailing comma", "a, b,", engine.RefuseTrailingSeparator, `"," at column 5`},
		{"trailing then", "a then", engine.RefuseTrailingSeparator, `"then" at column 3`},
		{"trailing comma then", "a, then", engine.RefuseTrailingSeparator, `"then" at column 4`},
		{"trailing separator before flag", "a -> --thread", engine.RefuseTrailingSeparator, `"->"`},
		{"separator before --", "a -> -- ctx", engine.RefuseTrailingSeparator, `followed by "--"`},
		{"trailing unicode arrow", "a →", engine.RefuseTrailingSeparator, `"→" at column 3`},
		{"trailing separator before stray quote", `a, "`, engine.RefuseTrailingSeparator, `","`},
		{"empty", "", engine.RefuseEmptyChain, "names no skill"},
		{"whitespace only", " \t\n\u00a0", engine.RefuseEmptyChain, "names no skill"},
		{"flags only", "--thread --auto", engine.RefuseEmptyChain, "names no skill"},
		{"quotes only", `“”`, engine.RefuseEmptyChain, "names no skill"},
		{"starts with comma", ", a", engine.RefuseEmptyChain, `separator "," at column 1`},
		{"starts with arrow", "--thread -> a", engine.RefuseEmptyChain, `separator "->" at column 10`},
		{"starts with then", "then a", engine.RefuseEmptyChain, `separator "then" at column 1`},
		{"context only", "-- mobile checkout", engine.RefuseEmptyChain, `before "--" at column 1`},
		{"double comma", "a,,b", engine.RefuseParseError, "missing between them"},
		{"arrow then comma", "a -> , b", engine.RefuseParseError, `"," at column 6 follows separator "->" at column 3`},
		{"then then comma", "a then, b", engine.RefuseParseError, "missing between them"},
		{"path traversal", "../x", engine.RefuseInvalidSkillName, "not a path"},
		{"slash", "a/b -> c", engine.RefuseInvalidSkillName, `"a/b" at column 1`},
		{"upper case", "deliver-prd -> Deliver-PRD", engine.RefuseInvalidSkillName, "lower case"},
		{"underscore", "a, b_c", engine.RefuseInvalidSkillName, `"b_c" at column 4`},
		{"leading dash", "-x", engine.RefuseInvalidSkillName, `"-x"`},
		{"too long", strings.Repeat("a", 129), engine.RefuseInvalidSkillName, "at most 128"},
		{"column counts characters", "“a” -> É", engine.RefuseInvalidSkillName, "column 8"},
		{"unknown flag", "a --foo -> b", engine.RefuseInvalidInput, `unknown flag "--foo" at column 3`},
		{"unknown flag in implicit context", "a, b fix the --verbose flag", engine.RefuseInvalidInput, `"--verbose"`},
		{"mistyped dry run", "a --dryrun", engine.RefuseInvalidInput, `"--dryrun"`},
		{"upper case flag", "--Thread a", engine.RefuseInvalidInput, `"--Thread"`},
		{"flag with value", "a --auto=true", engine.RefuseInvalidInput, `"--auto=true"`},
		{"long arrow is not a separator", "a --> b", engine.RefuseInvalidInput, `"-->"`},
		{"invalid utf-8", "a -> \xff", engine.RefuseInvalidInput, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Chain(tt.expr)
			if err == nil {
				t.Fatalf("Chain(%q) = %+v, want a %s refusal", tt.expr, got, tt.reason)
			}
			var r *engine.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Chain(%q) error %T %v, want *engine.Refusal", tt.expr, err, err)
			}
			if r.Reason != tt.reason {
				t.Errorf("Reason = %s, want %s (%s)", r.Reason, tt.reason, r.Message)
			}
			if r.Source != tt.expr || r.Line != 1 {
				t.Errorf("Source, Line = %q, %d; want %q, 1", r.Source, r.Line, tt.expr)
			}
			if !strings.Contains(r.Message, tt.msg) {
				t.Errorf("Message = %q, want it to contain %q", r.Message, tt.msg)
			}
		})
	}
}

// Pre-flight warns about a forgotten arrow only when the context was not
// set apart with a lone "--".
func TestChainExplicitContext(t *testing.T) {
	for expr, want := range map[string]bool{
		"deliver-prd deliver-user-stories -- mobile": false,
		"deliver-prd -- deliver-user-stories next":   true,
		"deliver-prd -> deliver-user-stories":        false,
		"a, b --thread -- ctx":                       true,
	} {
		c, err := Chain(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if c.ExplicitContext != want {
			t.Errorf("%s: ExplicitContext = %v, want %v (context %q)", expr, c.ExplicitContext, want, c.Context)
		}
	}
}
