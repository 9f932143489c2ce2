package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	settings "github.com/gonogo/gonogo/internal/config"
)

// The README and docs/ are read by people who copy their commands: every
// gonogo command line they show must be one gonogo takes, every variable
// they name one gonogo reads, and every link must lead somewhere.

const readmeRoot = "../.."

// readmeDocs returns README.md and docs/*.md, relative to the module root.
func readmeDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(readmeRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(readmeRoot, d)
		files = append(files, rel)
	}
	return files
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(readmeRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docRoot is the real command tree, with the help flags and the help
// command cobra adds only as it executes.
func docRoot() *cobra.Command {
	root, _ := newRootCmd(context.Background(), env{})
	root.InitDefaultHelpCmd()
	root.InitDefaultVersionFlag()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// shellLine is one command line of a fenced shell block, continuations
// joined.
type shellLine struct {
	line int // where it starts in its file
	text string
}

// shellLines returns the command lines of the ```sh, ```bash, ```console
// and bare ``` blocks of a Markdown text. In a console block only the
// lines after a "$ " prompt are commands.
func shellLines(md string) []shellLine {
	var out []shellLine
	var fence, lang string
	var cur *shellLine
	for i, raw := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(raw)
		if fence == "" {
			if m := fenceOpen.FindStringSubmatch(trimmed); m != nil {
				fence, lang = m[1], strings.ToLower(m[2])
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
			fence, cur = "", nil
			continue
		}
		if lang != "" && lang != "sh" && lang != "bash" && lang != "console" && lang != "shell" {
			continue
		}
		text := trimmed
		if cur == nil {
			prompted := strings.HasPrefix(text, "$ ")
			if lang == "console" && !prompted {
				continue
			}
			text = strings.TrimPrefix(text, "$ ")
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			out = append(out, shellLine{line: i + 1})
			cur = &out[len(out)-1]
		}
		// A line ending in \, && , || or | goes on on the next.
		cont := strings.HasSuffix(text, "\\") || strings.HasSuffix(text, "&&") || strings.HasSuffix(text, "|")
		cur.text += " " + strings.TrimSuffix(text, "\\")
		if !cont {
			cur = nil
		}
	}
	return out
}

var fenceOpen = regexp.MustCompile("^(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")

// shellWords splits a command line into words, as a shell would, and
// cuts it into the commands its operators (&&, ||, ;, |, &) separate. A
// comment ends the line; a command substitution is a command of its own.
// Quotes are removed; what they enclose is one word.
func shellWords(line string) [][]string {
	sp := &shellSplit{rs: []rune(line)}
	for i := 0; i < len(sp.rs); i++ {
		i = sp.step(i)
	}
	sp.endCmd()
	return sp.cmds
}

// shellSplit is shellWords' state: the commands so far, the words of the
// current one, and the word being read.
type shellSplit struct {
	rs     []rune
	cmds   [][]string
	words  []string
	w      strings.Builder
	inWord bool
}

// step reads the rune at i (and what it opens) and returns the index of
// the last rune it consumed.
func (sp *shellSplit) step(i int) int {
	r := sp.rs[i]
	switch {
	case r == '\'' || r == '"':
		return sp.quoted(i)
	case r == '\\' && i+1 < len(sp.rs):
		sp.add(string(sp.rs[i+1]))
		return i + 1
	case (r == '$' || r == '<') && i+1 < len(sp.rs) && sp.rs[i+1] == '(':
		return sp.subst(i)
	case r == '#' && !sp.inWord:
		return len(sp.rs)
	case strings.ContainsRune(";|&()", r):
		sp.endCmd()
	case unicode.IsSpace(r):
		sp.endWord()
	default:
		sp.add(string(r))
	}
	return i
}

func (sp *shellSplit) add(s string) {
	sp.w.WriteString(s)
	sp.inWord = true
}

// quoted reads a quoted string opening at i; in double quotes a backslash
// escapes the next rune.
func (sp *shellSplit) quoted(i int) int {
	q := sp.rs[i]
	j := i + 1
	for j < len(sp.rs) && sp.rs[j] != q {
		if q == '"' && sp.rs[j] == '\\' {
			j++
		}
		j++
	}
	sp.add(string(sp.rs[i+1 : min(j, len(sp.rs))]))
	return j
}

// subst reads $(...) or <(...) opening at i: the inside is a command of
// its own, but $(go env GOPATH) in a path stays part of its word.
func (sp *shellSplit) subst(i int) int {
	depth, j := 1, i+2
	for j < len(sp.rs) && depth > 0 {
		switch sp.rs[j] {
		case '(':
			depth++
		case ')':
			depth--
		}
		j++
	}
	inner := string(sp.rs[i+2 : max(j-1, i+2)])
	if sp.inWord || (j < len(sp.rs) && !unicode.IsSpace(sp.rs[j])) {
		sp.add("$(" + inner + ")")
	} else {
		sp.cmds = append(sp.cmds, shellWords(inner)...)
	}
	return j - 1
}

func (sp *shellSplit) endWord() {
	if sp.inWord {
		sp.words = append(sp.words, sp.w.String())
	}
	sp.w.Reset()
	sp.inWord = false
}

func (sp *shellSplit) endCmd() {
	sp.endWord()
	if len(sp.words) > 0 {
		sp.cmds = append(sp.cmds, sp.words)
	}
	sp.words = nil
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// gonogoArgs returns the arguments of a command that runs gonogo, and
// whether it does: gonogo, ./gonogo, $(go env GOPATH)/bin/gonogo or
// go run ./cmd/gonogo, after any VAR=value assignments.
func gonogoArgs(words []string) ([]string, bool) {
	for len(words) > 0 && envAssign.MatchString(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil, false
	}
	switch {
	case words[0] == "gonogo", words[0] == "./gonogo", strings.HasSuffix(words[0], "/bin/gonogo"):
		return dropRedirects(words[1:]), true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && strings.TrimSuffix(words[2], "/") == "./cmd/gonogo":
		return dropRedirects(words[3:]), true
	}
	return nil, false
}

// dropRedirects removes > FILE, 2>&1 and the like.
func dropRedirects(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == ">" || a == ">>" || a == "<" || a == "2>" || a == "2>>":
			i++
		case strings.HasPrefix(a, ">") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "<"):
		default:
			out = append(out, a)
		}
	}
	return out
}

// checkGonogoArgs says what is wrong with a gonogo command line: a
// command that does not exist, or a flag its command does not define.
func checkGonogoArgs(root *cobra.Command, args []string) []string {
	var problems []string
	c := root
	descending := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			f, msg := lookupDocFlag(c, a)
			if msg != "" {
				problems = append(problems, msg)
				continue
			}
			if f.NoOptDefVal == "" && !strings.Contains(a, "=") && !(len(a) > 2 && a[1] != '-') {
				i++ // its value
			}
			continue
		}
		if descending {
			if sub := findSub(c, a); sub != nil {
				c = sub
				continue
			}
			if c.HasSubCommands() {
				problems = append(problems, fmt.Sprintf("%s has no command %q", c.CommandPath(), a))
			}
			descending = false
		}
	}
	return problems
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || slices.Contains(sub.Aliases, name) {
			return sub
		}
	}
	return nil
}

// lookupDocFlag finds --name, --name=value or -x (local or inherited).
func lookupDocFlag(c *cobra.Command, a string) (*pflag.Flag, string) {
	if name, ok := strings.CutPrefix(a, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		if f := c.Flags().Lookup(name); f != nil {
			return f, ""
		}
		if f := c.InheritedFlags().Lookup(name); f != nil {
			return f, ""
		}
		return nil, fmt.Sprintf("%s has no flag --%s", c.CommandPath(), name)
	}
	short := strings.TrimPrefix(a, "-")
	if short == "" {
		return nil, fmt.Sprintf("%s: %q is not a flag", c.CommandPath(), a)
	}
	f := c.Flags().ShorthandLookup(short[:1])
	if f == nil {
		f = c.InheritedFlags().ShorthandLookup(short[:1])
	}
	if f == nil || (len(short) > 1 && f.NoOptDefVal != "") {
		return nil, fmt.Sprintf("%s has no flag -%s", c.CommandPath(), short)
	}
	return f, ""
}

// docCommandProblems checks every gonogo command line of a Markdown text.
func docCommandProblems(root *cobra.Command, name, md string) (problems []string, checked int) {
	for _, l := range shellLines(md) {
		for _, words := range shellWords(l.text) {
			args, ok := gonogoArgs(words)
			if !ok {
				continue
			}
			checked++
			for _, p := range checkGonogoArgs(root, args) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s (in %q)", name, l.line, p, strings.TrimSpace(l.text)))
			}
		}
	}
	return problems, checked
}

func TestReadmeCommandsExist(t *testing.T) {
	root := docRoot()
	total := 0
	for _, f := range readmeDocs(t) {
		problems, n := docCommandProblems(root, f, readDoc(t, f))
		total += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The README alone shows more than this many; far fewer means the
	// extraction broke, not that the docs are right.
	if total < 30 {
		t.Errorf("checked only %d gonogo command lines", total)
	}

	t.Run("made-up lines fail", func(t *testing.T) {
		md := "text\n\n```sh\n" +
			"gonogo frobnicate RUN                       # no such command\n" +
			"gonogo run --no-such-flag plan.md\n" +
			"GONOGO_DATA_DIR=x gonogo show RUN -q\n" +
			"gonogo check plan.md && gonogo workflow frob\n" +
			"yes approve | go run ./cmd/gonogo runs \\\n  --thread\n" +
			"gonogo check plan.md |\n  gonogo decide RUN approve --force\n" +
			"```\n"
		problems, n := docCommandProblems(root, "made-up.md", md)
		if n != 8 {
			t.Errorf("checked %d command lines, want 8", n)
		}
		for _, want := range []string{
			`gonogo has no command "frobnicate"`,
			"gonogo run has no flag --no-such-flag",
			"gonogo show has no flag -q",
			`gonogo workflow has no command "frob"`,
			"gonogo runs has no flag --thread",
			"gonogo decide has no flag --force",
		} {
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
				t.Errorf("no problem %q among:\n%s", want, strings.Join(problems, "\n"))
			}
		}
		if len(problems) != 6 {
			t.Errorf("%d problems, want 6:\n%s", len(problems), strings.Join(problems, "\n"))
		}
	})

	t.Run("good lines pass", func(t *testing.T) {
		md := "```console\n$ gonogo export RUN --format md -o run.md\nwritten\n```\n" +
			"```bash\nsource <(gonogo completion bash)   # this shell\n" +
			"\"$(go env GOPATH)/bin/gonogo\" decide RUN redo --attempt=2 -- shorter --please\n" +
			"gonogo run --chain 'a -> b --thread -- x' --skills DIR plan.md > out 2>&1\n```\n"
		problems, n := docCommandProblems(root, "good.md", md)
		if n != 4 || len(problems) > 0 {
			t.Errorf("checked %d lines (want 4), problems:\n%s", n, strings.Join(problems, "\n"))
		}
	})
}

// moduleSources parses the module's Go files outside testdata: those of
// tests or not.
func moduleSources(t *testing.T, tests bool) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(readmeRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != readmeRoot && (n == "testdata" || strings.HasPrefix(n, ".") || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") != tests {
			return nil
		}
		// Mode 0 resolves objects: envArgNames follows a range variable
		// to the list it ranges over.
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, files
}

// indirectReads are the variables read through a name the source does not
// spell at the call (a field's list), by file and argument.
var indirectReads = map[string][]string{
	"login.go v": {"CODEX_API_KEY"}, // codex login status does not count it; doctor says so
}

// envReads finds every environment variable gonogo reads: the env tags of
// its go-envconfig structs, and the names passed to getenv, os.Getenv and
// os.LookupEnv.
func envReads(t *testing.T) map[string]bool {
	t.Helper()
	fset, files := moduleSources(t, false)
	consts := map[string]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[name.Name] = s
						}
					}
				}
			}
			return true
		})
	}
	reads := map[string]bool{}
	for _, f := range files {
		file := filepath.Base(fset.Position(f.Pos()).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if n.Tag != nil {
					tag, _ := strconv.Unquote(n.Tag.Value)
					if name, _, _ := strings.Cut(reflect.StructTag(tag).Get("env"), ","); name != "" {
						reads[name] = true
					}
				}
			case *ast.CallExpr:
				if !isEnvCall(n.Fun) || len(n.Args) == 0 {
					return true
				}
				names := envArgNames(n.Args[0], consts)
				if names == nil {
					names = indirectReads[file+" "+exprText(n.Args[0])]
				}
				if names == nil {
					t.Errorf("%s: cannot tell which variable %s reads: name it in indirectReads", fset.Position(n.Pos()), exprText(n))
				}
				for _, v := range names {
					reads[v] = true
				}
			}
			return true
		})
	}
	return reads
}

func isEnvCall(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	return name == "getenv" || name == "Getenv" || name == "LookupEnv"
}

// envArgNames resolves a getenv argument: a string, a constant, or the
// variable of a range over a list of strings.
func envArgNames(arg ast.Expr, consts map[string]string) []string {
	if s, ok := stringLit(arg); ok {
		return []string{s}
	}
	var id *ast.Ident
	switch a := arg.(type) {
	case *ast.Ident:
		id = a
	case *ast.SelectorExpr:
		id = a.Sel
	}
	if id == nil {
		return nil
	}
	if s, ok := consts[id.Name]; ok {
		return []string{s}
	}
	if id.Obj == nil {
		return nil
	}
	as, ok := id.Obj.Decl.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return nil
	}
	rng, ok := as.Rhs[0].(*ast.UnaryExpr)
	if !ok || rng.Op != token.RANGE {
		return nil
	}
	lit, ok := rng.X.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		s, ok := stringLit(el)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprText(e.Fun) + "(...)"
	case *ast.BasicLit:
		return e.Value
	}
	return fmt.Sprintf("%T", e)
}

// notRead are GONOGO_ names the docs may mention although gonogo does not
// read them: what it sets for an agent, and what its tests and scripts
// read. Each must still be spelled in the source that gives it meaning.
var notRead = map[string]string{
	"GONOGO_RUN_ID":          "source", // set for the command runner
	"GONOGO_STEP":            "source",
	"GONOGO_ATTEMPT":         "source",
	"GONOGO_SKILL":           "source",
	"GONOGO_SKILL_DIR":       "source",
	"GONOGO_AGENT_ID":        "source", // the marker of an agent's processes
	"GONOGO_OPT_MODEL":       "source", // a workflow step's runner option, GONOGO_OPT_<NAME>
	"GONOGO_LONG":            "tests",
	"GONOGO_REPLICAS_DEBUG":  "tests",
	"GONOGO_AGENTS_DIR":      "tests", // .ci/install-agents and the real-CLI tests
	"GONOGO_SLACK_TYPES_DIR": "tests", // .ci/install-slack-types and bot's type-check test
	"GONOGO_SCREENSHOTS":     "tests", // internal/web's browser tests write the docs' screenshots there
	"GONOGO_LOAD":            "tests", // bot's 200-run benchmark
	"GONOGO_SKILLS":          "compose.yaml",
	"GONOGO_TRY_DIR":         "deploy/try-temporal.sh",
	"GONOGO_TEMPORAL_SERVER": "tests", // the server binary of the tests that run it in its own process
}

var gonogoVar = regexp.MustCompile(`\bGONOGO_[A-Z0-9_]*[A-Z0-9]`)

func TestReadmeEnvironment(t *testing.T) {
	reads := envReads(t)
	// The scan must find what the structs declare; reflect reads them as
	// go-envconfig does.
	for _, s := range []any{settings.Config{}, settings.Slack{}, settings.Temporal{}} {
		rt := reflect.TypeOf(s)
		for i := 0; i < rt.NumField(); i++ {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("env"), ",")
			if name != "" && !reads[name] {
				t.Errorf("the source scan missed %s (%s)", name, rt.Name())
			}
		}
	}
	for _, v := range []string{"GONOGO_ACTOR", "GONOGO_ARTIFACTS", "GONOGO_S3_ENDPOINT", "VISUAL", "USER", "AWS_REGION", "CODEX_API_KEY"} {
		if !reads[v] {
			t.Errorf("the source scan missed %s, which gonogo reads", v)
		}
	}

	configDoc := readDoc(t, filepath.Join("docs", "configuration.md"))
	for v := range reads {
		if !strings.Contains(configDoc, "`"+v+"`") {
			t.Errorf("docs/configuration.md does not list %s, which gonogo reads", v)
		}
	}

	sources := notReadSources(t)
	for name, where := range notRead {
		if !strings.Contains(sources[where], strings.TrimSuffix(name, "MODEL")) {
			t.Errorf("%s is allowed in the docs as named in %s, but %s does not name it", name, where, where)
		}
	}
	for _, f := range readmeDocs(t) {
		for i, line := range strings.Split(readDoc(t, f), "\n") {
			for _, v := range gonogoVar.FindAllString(line, -1) {
				if !reads[v] && notRead[v] == "" {
					t.Errorf("%s:%d: %s is not a variable gonogo reads", f, i+1, v)
				}
			}
		}
	}
}

// notReadSources is the text of the places notRead's names come from.
func notReadSources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tests := range []bool{false, true} {
		fset, files := moduleSources(t, tests)
		var b strings.Builder
		for _, f := range files {
			src, err := os.ReadFile(fset.Position(f.Pos()).Filename)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(src)
		}
		if tests {
			out["tests"] = b.String()
		} else {
			out["source"] = b.String()
		}
	}
	for _, extra := range []string{".ci/install-agents", ".ci/run"} {
		if b, err := os.ReadFile(filepath.Join(readmeRoot, extra)); err == nil {
			out["tests"] += string(b)
		}
	}
	for _, f := range []string{"compose.yaml", "deploy/try-temporal.sh"} {
		b, _ := os.ReadFile(filepath.Join(readmeRoot, f))
		out[f] = string(b)
	}
	return out
}

// mdLink is [text](target); images too.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// linkProblems checks the relative links of a Markdown file (rel, from
// the module root): the file exists, and so does the heading an anchor
// names. read returns a file's text, or false.
func linkProblems(rel, md string, read func(string) (string, bool)) []string {
	var problems []string
	for i, line := range proseLines(md) {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := rel
			if path != "" {
				file = filepath.Join(filepath.Dir(rel), path)
			}
			text, ok := read(file)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file %s", rel, i+1, target, file))
				continue
			}
			if anchor != "" && !slices.Contains(anchors(text), anchor) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", rel, i+1, target, file, anchor))
			}
		}
	}
	return problems
}

// proseLines returns md's lines with fenced blocks and code spans blanked,
// so their brackets are not taken for links.
func proseLines(md string) []string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if m := fenceOpen.FindStringSubmatch(trimmed); m != nil {
			fence, lines[i] = m[1], ""
			continue
		}
		lines[i] = codeSpan.ReplaceAllString(l, "")
	}
	return lines
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// anchors are the ids GitHub gives a Markdown file's headings.
func anchors(md string) []string {
	var out []string
	seen := map[string]int{}
	for _, l := range proseLinesKeepingHeadings(md) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id := slug(m[1])
		if n := seen[id]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", id, n))
		} else {
			out = append(out, id)
		}
		seen[id]++
	}
	return out
}

// proseLinesKeepingHeadings is md without its fenced blocks (a "# comment"
// in a shell block is no heading).
func proseLinesKeepingHeadings(md string) []string {
	var out []string
	fence := ""
	for _, l := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case fenceOpen.MatchString(trimmed):
			fence = fenceOpen.FindStringSubmatch(trimmed)[1]
		default:
			out = append(out, l)
		}
	}
	return out
}

var (
	heading   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkInTxt = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// slug is GitHub's heading id: lower case, punctuation dropped, spaces to
// hyphens.
func slug(h string) string {
	h = linkInTxt.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestReadmeLinksResolve(t *testing.T) {
	read := func(rel string) (string, bool) {
		path := filepath.Join(readmeRoot, rel)
		fi, err := os.Stat(path)
		if err != nil {
			return "", false
		}
		if fi.IsDir() {
			return "", true
		}
		b, err := os.ReadFile(path)
		return string(b), err == nil
	}
	links := 0
	for _, f := range readmeDocs(t) {
		md := readDoc(t, f)
		for _, l := range proseLines(md) {
			links += len(mdLink.FindAllString(l, -1))
		}
		for _, p := range linkProblems(f, md, read) {
			t.Error(p)
		}
	}
	if links < 10 {
		t.Errorf("found only %d links", links)
	}

	t.Run("broken links fail", func(t *testing.T) {
		docs := map[string]string{
			"README.md":     "# gonogo\n\nSee [slack](docs/slack.md#in-slack), [gone](docs/gone.md), [bad](docs/slack.md#nowhere), [here](#gonogo), [not](#nope).\n",
			"docs/slack.md": "# Slack\n\n## In Slack\n\n```sh\n# not a heading\n```\n",
		}
		fake := func(rel string) (string, bool) { s, ok := docs[filepath.ToSlash(rel)]; return s, ok }
		problems := linkProblems("README.md", docs["README.md"], fake)
		if len(problems) != 3 {
			t.Fatalf("%d problems, want 3 (gone.md, #nowhere, #nope):\n%s", len(problems), strings.Join(problems, "\n"))
		}
		if got := anchors(docs["docs/slack.md"]); !slices.Equal(got, []string{"slack", "in-slack"}) {
			t.Errorf("anchors %v", got)
		}
		if got := slug("The audit trail: `gonogo export`"); got != "the-audit-trail-gonogo-export" {
			t.Errorf("slug %q", got)
		}
	})
}
