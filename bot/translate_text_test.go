package bot

import (
	"testing"
)

func TestSlackText(t *testing.T) {
	tests := []struct{ in, want, wantDropped string }{
		{"a &lt;b&gt; &amp; c", "a <b> & c", ""},
		{"&amp;lt; stays typed", "&lt; stays typed", ""},
		{"<https://x.io/a?b=1&amp;c=2>", "https://x.io/a?b=1&c=2", ""},
		{"<https://x.io|x.io> <http://y.io/|y.io/> <mailto:a@b.io|a@b.io>", "x.io y.io/ a@b.io", ""},
		{"<https://x.io/spec|the spec>", "the spec (https://x.io/spec)", ""},
		{"<@U0BOT> run <@U0ANA|ana> <@W0BOB>", "@U0BOT run @ana @W0BOB", " run  "},
		{"<#C0GEN|general> <#C0OPS>", "#general #C0OPS", ""},
		{"<!here> <!channel> <!subteam^S0PM|@pm-team> <!subteam^S0QA> <!date^1392734382^{date}|Feb 18>", "@here @channel @pm-team @S0QA Feb 18", ""},
		{"a < b > c", "a < b > c", ""}, // not markup Slack writes, kept as is
		{"x <y", "x <y", ""},
		{"<b>bold</b> <1:2>", "<b>bold</b> <1:2>", ""},
		{"<<@U1>>", "<@U1>", "<>"},
	}
	for _, tt := range tests {
		if got := slackText(tt.in, false); got != tt.want {
			t.Errorf("slackText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.wantDropped != "" {
			if got := slackText(tt.in, true); got != tt.wantDropped {
				t.Errorf("slackText(%q, drop mentions) = %q, want %q", tt.in, got, tt.wantDropped)
			}
		}
	}
}
