package bot

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/internal/intake"
)

// CommandKind is what a slash command asks for.
type CommandKind string

const (
	CmdChain CommandKind = "chain" // run skills in a row
	CmdRun   CommandKind = "run"   // run a named workflow
	CmdCheck CommandKind = "check" // show what a chain or a workflow would run; run nothing
	CmdRuns  CommandKind = "runs"  // list the runs in this channel
	CmdStats CommandKind = "stats" // what the decisions teach, per skill and agent
	CmdHelp  CommandKind = "help"
)

var commandKinds = []CommandKind{CmdChain, CmdRun, CmdCheck, CmdRuns, CmdStats, CmdHelp}

// Command is a slash command, read.
type Command struct {
	Kind  CommandKind
	Slash string // the command as Slack names it ("/gonogo"), for messages
	Text  string // the command's text with Slack's markup and entities decoded

	// Checks is what CmdCheck checks: CmdChain ("check EXPR" or "check
	// chain EXPR") or CmdRun ("check run WORKFLOW ..."); the fields below
	// are filled as for that command.
	Checks CommandKind

	Chain    engine.ChainExpr  // CmdChain: the parsed chain (flags and context included)
	BestOf   []string          // CmdChain: --best-of, the runners every step runs on at once
	Workflow string            // CmdRun: the workflow's name
	Args     map[string]string // CmdRun: --arg k=v; nil when none
	Flags    engine.Flags      // CmdChain and CmdRun
	Context  string            // CmdChain and CmdRun: the shared context, "" when none

	// Since and Skill are CmdStats' --since (engine.ParseSince reads it;
	// engine.DefaultStatsSince when not given) and --skill ("" for all).
	Since string
	Skill string

	// Who and where. Team is the workspace Slack sent the command from
	// (team_id); a front end that serves one team compares it.
	User, Team, Channel string
	ResponseURL         string
	TriggerID           string
}

const defaultSlash = "/gonogo"

var commandUsage = map[CommandKind]string{
	CmdChain: "%s chain EXPR [flags] [-- context]         skills in a row: a -> b, c then d",
	CmdRun:   "%s run WORKFLOW [flags] [--arg k=v ...] [-- context]",
	CmdCheck: "%s check EXPR | check run WORKFLOW [...]   what would run, and why not; runs nothing",
	CmdRuns:  "%s runs                                     the runs in this channel",
	CmdStats: "%s stats [--since 30d] [--skill NAME]       per skill and agent: attempts, decisions, wait, cost",
	CmdHelp:  "%s help",
}

// Usage returns the usage line of one subcommand of the slash command
// slash ("" means /gonogo).
func Usage(slash string, kind CommandKind) string {
	if slash == "" {
		slash = defaultSlash
	}
	u, ok := commandUsage[kind]
	if !ok {
		return Help(slash)
	}
	return fmt.Sprintf(u, slash)
}

// Help is the text of "/gonogo help": every subcommand, the flags, and how
// to start a run from a plan file.
func Help(slash string) string {
	if slash == "" {
		slash = defaultSlash
	}
	var b strings.Builder
	for _, k := range commandKinds {
		b.WriteString(Usage(slash, k))
		b.WriteByte('\n')
	}
	b.WriteString("flags: --auto (advance without pausing; a FAILED step halts, an EMPTY step pauses), " +
		"--force-auto, --dry-run, --thread (each step gets the previous step's artifact), " +
		"--best-of claude,codex (a chain's every step run by each agent at once; you pick one)\n")
	b.WriteString("or mention the bot in a message with a Markdown (.md) or text (.txt) plan attached; " +
		"flags go in the message text (--yes starts it without the preview; the word check only shows it)")
	return b.String()
}

// ParseCommand reads a slash command: "chain EXPR [flags] [-- context]",
// "run WORKFLOW [flags] [--arg k=v ...] [-- context]", "check" followed by
// either ("chain" may be left out: "check EXPR"), "runs" and "help"
// (also empty text, "-h", "--help" and "?"). Bad input is an *InputError
// with the usage of the subcommand concerned, except the refusals of the
// chain parser (a trailing separator, an invalid skill name, an unknown
// flag, an empty chain), which are returned as they are: *engine.Refusal,
// shown with Usage(slash, CmdChain).
func ParseCommand(sc slack.SlashCommand) (Command, error) {
	cmd, err := commandOf(sc)
	if err != nil {
		return Command{}, err
	}
	word, rest := firstWord(cmd.Text)
	sub := strings.ToLower(word)
	if helpWords[sub] {
		cmd.Kind = CmdHelp
		return cmd, nil
	}
	parse, ok := subcommands[CommandKind(sub)]
	if !ok {
		return Command{}, &InputError{Problem: unknownSubcommand(cmd.Slash, word, rest), Usage: Help(cmd.Slash)}
	}
	return parse(cmd, rest)
}

// helpWords ask for help in place of a subcommand.
var helpWords = map[string]bool{"": true, "help": true, "-h": true, "--help": true, "—help": true, "–help": true, "?": true}

// subcommands read what follows each subcommand but help.
var subcommands = map[CommandKind]func(cmd Command, rest string) (Command, error){
	CmdRuns:  parseRuns,
	CmdStats: parseStatsCommand,
	CmdChain: parseChain,
	CmdRun:   parseRunCommand,
	CmdCheck: parseCheck,
}

// commandOf is who sent a slash command, where, and its text as typed,
// each checked.
func commandOf(sc slack.SlashCommand) (Command, error) {
	cmd := Command{
		Slash:       sc.Command,
		User:        sc.UserID,
		Team:        sc.TeamID,
		Channel:     sc.ChannelID,
		ResponseURL: sc.ResponseURL,
		TriggerID:   sc.TriggerID,
	}
	if cmd.Slash == "" {
		cmd.Slash = defaultSlash
	}
	if err := checkIDs("slash command", "user_id", sc.UserID, "channel_id", sc.ChannelID, "team_id", sc.TeamID); err != nil {
		return Command{}, err
	}
	if err := checkText("the command text", sc.Text, MaxCommandChars); err != nil {
		return Command{}, &InputError{Problem: err.Error() + longTextHint(sc.Text), Usage: Help(cmd.Slash)}
	}
	cmd.Text = slackText(sc.Text, false)
	return cmd, nil
}

// parseRuns reads "runs", which takes nothing after it.
func parseRuns(cmd Command, rest string) (Command, error) {
	cmd.Kind = CmdRuns
	if extra := trimSpace(rest); extra != "" {
		return Command{}, &InputError{
			Problem: fmt.Sprintf("%s runs takes nothing after it (got %q)", cmd.Slash, clip(extra, 40)),
			Usage:   Usage(cmd.Slash, CmdRuns),
		}
	}
	return cmd, nil
}

// parseStatsCommand reads "stats [--since WHEN] [--skill NAME]".
func parseStatsCommand(cmd Command, rest string) (Command, error) {
	cmd.Kind = CmdStats
	if err := parseStats(&cmd, rest); err != nil {
		return Command{}, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdStats)}
	}
	return cmd, nil
}

// parseChain reads "chain EXPR [flags] [-- context]".
func parseChain(cmd Command, rest string) (Command, error) {
	cmd.Kind = CmdChain
	if err := parseChainInto(&cmd, rest); err != nil {
		return Command{}, err
	}
	return cmd, nil
}

// parseRunCommand reads "run WORKFLOW [flags] [--arg k=v ...] [-- context]".
func parseRunCommand(cmd Command, rest string) (Command, error) {
	cmd.Kind = CmdRun
	if err := parseRun(&cmd, rest); err != nil {
		return Command{}, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdRun)}
	}
	return cmd, nil
}

// parseChainInto reads "EXPR [flags] [-- context]" into cmd.
func parseChainInto(cmd *Command, rest string) error {
	rest, names, err := cutBestOf(rest)
	if err != nil {
		return &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdChain)}
	}
	ce, err := intake.Chain(chainText(rest))
	if err != nil {
		return err
	}
	cmd.Chain, cmd.Flags, cmd.Context, cmd.BestOf = ce, ce.Flags, ce.Context, names
	return nil
}

// cutBestOf takes "--best-of NAMES" (or "--best-of=NAMES") out of a
// chain's text before a lone "--", since the chain's own flags take no
// value: the text without it, and the names. Whether gonogo has runners
// of those names is checked where the run starts.
func cutBestOf(text string) (string, []string, error) {
	text = trimSpace(text) // columns count from the chain's first name
	words, _ := splitWords(text, false)
	at, value, end, err := findBestOf(words)
	if err != nil {
		return "", nil, err
	}
	if at < 0 {
		return text, nil, nil
	}
	names := engine.ParseBestOf(value)
	if len(names) == 0 {
		return "", nil, fmt.Errorf("--best-of at column %d needs runner names: --best-of claude,codex", words[at].col)
	}
	return text[:words[at].start] + text[end:], names, nil
}

// findBestOf finds "--best-of" among the words before a lone "--": the
// index of its word (-1 when there is none), its value, and the offset
// where the value ends.
func findBestOf(words []word) (at int, value string, end int, err error) {
	at = -1
	for k := 0; k < len(words) && !words[k].isDashDash(); k++ {
		w := words[k]
		v, inline, ok := bestOfFlag(w)
		if !ok {
			continue
		}
		if at >= 0 {
			return -1, "", 0, fmt.Errorf("--best-of is given twice (columns %d and %d); give it once, with every runner: --best-of claude,codex", words[at].col, w.col)
		}
		at, value, end = k, v, w.end
		if !inline {
			if k+1 == len(words) || words[k+1].isDashDash() {
				return -1, "", 0, fmt.Errorf("--best-of at column %d needs runner names: --best-of claude,codex", w.col)
			}
			k++
			value, end = words[k].text, words[k].end
		}
	}
	return at, value, end, nil
}

// bestOfFlag reads w as "--best-of": ok, and its value when it is written
// inline ("--best-of=NAMES"); else the names are the next word.
func bestOfFlag(w word) (value string, inline, ok bool) {
	name, isFlag := w.flag()
	if !isFlag {
		return "", false, false
	}
	if name == "best-of" {
		return "", false, true
	}
	value, inline = strings.CutPrefix(name, "best-of=")
	return value, inline, inline
}

// parseCheck reads what follows "check": "run WORKFLOW ..." checks a
// workflow, "chain EXPR" or EXPR alone a chain (so a chain whose first
// skill is named "run" or "chain" is checked as "check chain EXPR").
func parseCheck(cmd Command, rest string) (Command, error) {
	cmd.Kind = CmdCheck
	word, after := firstWord(rest)
	switch strings.ToLower(word) {
	case "":
		return Command{}, &InputError{Problem: "name what to check: a chain of skills, or run and a workflow's name",
			Usage: Usage(cmd.Slash, CmdCheck)}
	case string(CmdRun):
		cmd.Checks = CmdRun
		if err := parseRun(&cmd, after); err != nil {
			return Command{}, &InputError{Problem: err.Error(), Usage: Usage(cmd.Slash, CmdCheck)}
		}
		return cmd, nil
	case string(CmdChain):
		rest = after
	}
	cmd.Checks = CmdChain
	if err := parseChainInto(&cmd, rest); err != nil {
		return Command{}, err
	}
	return cmd, nil
}

// unknownSubcommand refuses a word that is no subcommand, with the close
// subcommand, or the chain it seems to be.
func unknownSubcommand(slash, word, rest string) string {
	msg := fmt.Sprintf("unknown subcommand %q: %s takes chain, run, check, runs, stats or help", clip(word, 40), slash)
	var names []string
	for _, k := range commandKinds {
		names = append(names, string(k))
	}
	if len(word) <= 32 {
		if s := engine.Suggest(strings.ToLower(word), names); len(s) > 0 {
			return msg + fmt.Sprintf(" (did you mean %q?)", s[0])
		}
	}
	if forgotChain(word, rest) {
		return msg + fmt.Sprintf(" (to run skills in a row: %s chain %s ...)", slash, word)
	}
	return msg
}

// forgotChain reports a command that reads as a chain without its
// subcommand: "/gonogo deliver-prd -> deliver-stories".
func forgotChain(word, rest string) bool {
	return engine.ValidSkillName(word) && (strings.ContainsAny(rest, ",→>") || strings.Contains(strings.ToLower(rest), " then "))
}

func longTextHint(text string) string {
	if utf8.ValidString(text) && utf8.RuneCountInString(text) > MaxCommandChars {
		return ": put a long context in a plan file and mention the bot with it attached"
	}
	return ""
}

// chainText is the chain expression of "chain EXPR": trimmed, and with the
// first lone dash ("—" or "–", a "--" a keyboard rewrote) made "--" again,
// so that what follows it is context as written, flags included, exactly
// as after a typed "--".
func chainText(rest string) string {
	rest = trimSpace(rest)
	words, _ := splitWords(rest, false)
	for _, w := range words {
		if w.isDashDash() {
			if w.text != "--" {
				rest = rest[:w.start] + "--" + rest[w.end:]
			}
			break
		}
	}
	return rest
}

// runFlagNames are the flags of "run" besides --arg.
var runFlagNames = map[string]func(*engine.Flags){
	"auto":       func(f *engine.Flags) { f.Auto = true },
	"force-auto": func(f *engine.Flags) { f.ForceAuto = true },
	"dry-run":    func(f *engine.Flags) { f.DryRun = true },
	"thread":     func(f *engine.Flags) { f.Thread = true },
}

const knownRunFlags = "--auto, --force-auto, --dry-run, --thread, --arg k=v"

const knownMentionFlags = "--auto, --force-auto, --dry-run, --thread, --yes"

var argKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// parseRun reads "WORKFLOW [flags] [--arg k=v ...] [-- context]". Unlike a
// chain, run has no implicit context: a stray word is an error (a typo in a
// flag or a forgotten "--"), never silently part of the prompt.
func parseRun(cmd *Command, rest string) error {
	rest = trimSpace(rest) // columns count from the workflow name, as a chain's from its first name
	words, err := splitWords(rest, true)
	if err != nil {
		return err
	}
	for k := 0; k < len(words); k++ {
		w := words[k]
		if w.isDashDash() {
			cmd.Context = trimSpace(rest[w.end:])
			break
		}
		if name, ok := w.flag(); ok {
			used, err := runFlag(cmd, name, words, k)
			if err != nil {
				return err
			}
			k += used
			continue
		}
		if err := runWorkflowName(cmd, w); err != nil {
			return err
		}
	}
	if cmd.Workflow == "" {
		return errors.New("name the workflow to run")
	}
	return nil
}

// runFlag reads the flag words[k] (name is the flag without its dashes)
// into cmd; used is how many of the words after it were its value (a
// "--arg k=v" written as two words).
func runFlag(cmd *Command, name string, words []word, k int) (used int, err error) {
	w := words[k]
	name, value, hasValue := strings.Cut(name, "=")
	if set, ok := runFlagNames[name]; ok {
		if hasValue {
			return 0, fmt.Errorf("flag %q at column %d takes no value", w.raw, w.col)
		}
		set(&cmd.Flags)
		return 0, nil
	}
	if name != "arg" {
		return 0, unknownFlag(w, knownRunFlags)
	}
	if !hasValue {
		if k+1 == len(words) {
			return 0, fmt.Errorf("flag %q at column %d needs a name=value pair after it", w.raw, w.col)
		}
		used, value = 1, words[k+1].text
	}
	return used, addArg(cmd, value, w)
}

// runWorkflowName reads the word w, which is not a flag, as the workflow
// to run: there is one, and the context only follows a lone "--".
func runWorkflowName(cmd *Command, w word) error {
	if cmd.Workflow != "" {
		return fmt.Errorf("unexpected %q at column %d after the workflow name %q: one workflow at a time, "+
			"and the context goes after a lone \"--\"", clip(w.text, 40), w.col, cmd.Workflow)
	}
	if err := checkRunWorkflowName(w.text); err != nil {
		return fmt.Errorf("%w (at column %d)", err, w.col)
	}
	cmd.Workflow = w.text
	return nil
}

func addArg(cmd *Command, pair string, at word) error {
	key, value, ok := strings.Cut(pair, "=")
	switch {
	case !ok:
		return fmt.Errorf("--arg at column %d needs name=value, got %q", at.col, clip(pair, 40))
	case !argKeyRE.MatchString(key) || len(key) > 64:
		return fmt.Errorf("--arg at column %d: %q is not an argument name (letters, digits, '_' and '-', "+
			"starting with a letter or '_', at most 64)", at.col, clip(key, 40))
	}
	if _, dup := cmd.Args[key]; dup {
		return fmt.Errorf("--arg at column %d gives %q a second time", at.col, key)
	}
	if cmd.Args == nil {
		cmd.Args = map[string]string{}
	}
	cmd.Args[key] = value
	return nil
}

// checkRunWorkflowName holds a workflow name to the rule intake.Dir.Workflow
// applies (engine.ValidSkillName: lower-case letters, digits and dashes,
// starting with a letter or digit, at most 128), since the name picks a file
// in the workflows directory. A near miss (capitals, underscores) is offered
// in its valid form, never taken for it.
func checkRunWorkflowName(name string) error {
	switch {
	case name == "":
		return errors.New("the workflow name is empty")
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return fmt.Errorf("invalid workflow name %q: a workflow name is a plain name, not a path", clip(name, 40))
	case strings.HasSuffix(strings.ToLower(name), ".yaml") || strings.HasSuffix(strings.ToLower(name), ".yml"):
		return fmt.Errorf("invalid workflow name %q: name the workflow without .yaml", clip(name, 40))
	case len(name) > 128:
		return fmt.Errorf("invalid workflow name %q: at most 128 characters", clip(name, 40))
	case engine.ValidSkillName(name):
		return nil
	}
	return invalidWorkflowName(name)
}

// invalidWorkflowName refuses a name that breaks the naming rule, and
// offers its near miss in valid form (lower case, dashes for
// underscores) when there is one.
func invalidWorkflowName(name string) error {
	msg := fmt.Sprintf("invalid workflow name %q: workflow names are lower-case letters, digits and dashes, starting with a letter or digit",
		clip(name, 40))
	if near := strings.ReplaceAll(strings.ToLower(name), "_", "-"); engine.ValidSkillName(near) {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return errors.New(msg)
}

func unknownFlag(w word, known string) error {
	return fmt.Errorf("unknown flag %q at column %d: the flags are %s (text that starts with \"--\" goes after a lone \"--\")",
		clip(w.raw, 40), w.col, known)
}

// parseStats reads "[--since WHEN] [--skill NAME]" (also --since=WHEN):
// a period engine.ParseSince accepts, and a skill name.
func parseStats(cmd *Command, rest string) error {
	cmd.Since = engine.DefaultStatsSince
	words := strings.FieldsFunc(rest, isSpace)
	for k := 0; k < len(words); k++ {
		name, value, inline := strings.Cut(words[k], "=")
		if name != "--since" && name != "--skill" {
			return fmt.Errorf("%s stats takes --since and --skill (got %q)", cmd.Slash, clip(words[k], 40))
		}
		if !inline {
			if k+1 == len(words) {
				return fmt.Errorf("%s needs a value", name)
			}
			k++
			value = words[k]
		}
		if err := cmd.setStatsFlag(name, value); err != nil {
			return err
		}
	}
	return nil
}

// setStatsFlag sets --skill or --since (name) to value, checked.
func (cmd *Command) setStatsFlag(name, value string) error {
	if name == "--skill" {
		if !engine.ValidSkillName(value) {
			return fmt.Errorf("--skill %q is not a skill name", clip(value, 40))
		}
		cmd.Skill = value
		return nil
	}
	// The period is read again, against the time it is answered.
	if _, err := engine.ParseSince(value, time.Time{}); err != nil {
		return err
	}
	cmd.Since = value
	return nil
}
