package bot

// TestSlackTypes holds every Block Kit golden to Slack's own published
// TypeScript definitions: @slack/types and @slack/web-api, at the versions
// pinned in .ci/slack-types/package-lock.json, which .ci/install-slack-types
// installs into ${GONOGO_SLACK_TYPES_DIR:-$HOME/.cache/gonogo/slack-types}.
// Each golden becomes .ts files that assign it, as an object literal, to
// the argument type of each method that sends it, and one strict tsc run
// checks them all: a block type, a field or a value the definitions do not
// know fails, naming the golden and its line.
//
// Where the definitions lag what Slack documents, the lag is named here
// and checked some other way, never skipped in silence:
//   - a plan block's tasks are typed (TaskCardBlock | Record<string,
//     unknown>)[], so any object passes as a task: each task is also
//     assigned to TaskCardBlock on its own.
//   - TaskCardBlock requires a status, which Slack documents as optional
//     (https://docs.slack.dev/reference/block-kit/blocks/task-card-block/);
//     gonogo's manual and deferred plan tasks have none, as they never run.
//     So a task is checked as TaskCardBlock with its status optional, all
//     its other fields as the definitions have them.
//   - a response_url answer has no type in @slack/web-api (it is
//     @slack/bolt's RespondArguments): its text and blocks are a message's,
//     checked as chat.postEphemeral's, whose contents are the same.
//   - the definitions do not say which surface takes which block: an
//     alert block, which Slack takes in modals only, types as a message
//     block too. internal/fakeslack's CheckBlocks and CheckModal, which
//     TestGolden runs on every golden, hold the surfaces.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// slackTypesExcluded are the files under testdata that are not payloads
// gonogo sends to Slack, each with why; every other file there is a golden
// TestSlackTypes checks, so a new golden is checked without a word here.
var slackTypesExcluded = map[string]string{
	"fuzz": "Go fuzz corpora: text gonogo parses from Slack, not payloads it sends",
}

// tsMethod is one way a golden is checked: as the arguments of a Slack
// method (what Slack's Web API client takes), or as Block Kit whose every
// block must be a KnownBlock.
type tsMethod struct {
	name   string
	from   string // the package the type is imported from
	typ    string // the type; imports names the types it uses
	imp    string
	fields string // what the literal holds besides the golden's own fields
}

// Every message golden is checked as the arguments of each method that
// sends or replaces a message; every view golden as those of each that
// opens or replaces a modal. The Web API's types take a block array of
// (KnownBlock | Block)[], and Block is any object with a string type, so
// an unknown block type with no other field would pass them: each golden
// is also checked with its blocks as KnownBlock[], the blocks Slack's
// definitions know.
var (
	tsMessageMethods = []tsMethod{
		{"chat.postMessage arguments", "@slack/web-api", "ChatPostMessageArguments", "ChatPostMessageArguments",
			`"channel": "C0GOLDEN", "thread_ts": "1772460000.000100", `},
		{"chat.update arguments", "@slack/web-api", "ChatUpdateArguments", "ChatUpdateArguments",
			`"channel": "C0GOLDEN", "ts": "1772460000.000200", `},
		{"chat.postEphemeral arguments", "@slack/web-api", "ChatPostEphemeralArguments", "ChatPostEphemeralArguments",
			`"channel": "C0GOLDEN", "user": "U0ALICE1", `},
		{"a message of KnownBlock", "@slack/types", "{ text: string; blocks: KnownBlock[] }", "KnownBlock", ""},
	}
	tsViewMethods = []tsMethod{
		{"views.open arguments", "@slack/web-api", "ViewsOpenArguments", "ViewsOpenArguments", `"trigger_id": "1.2.3", "view": {`},
		{"views.update arguments", "@slack/web-api", "ViewsUpdateArguments", "ViewsUpdateArguments", `"view_id": "V0GOLDEN", "view": {`},
		{"a ModalView of KnownBlock", "@slack/types", "Omit<ModalView, 'blocks'> & { blocks: KnownBlock[] }", "KnownBlock, ModalView", ""},
	}
)

// tsFile is one generated .ts file: what it checks, and how its lines map
// back to the golden's.
type tsFile struct {
	golden string // path under testdata
	method string // what the golden is checked as
	// offset is added to a line of the .ts file to get the golden's line;
	// paths, when set, names the golden part each line checks instead.
	offset int
	paths  map[int]string
}

func TestSlackTypes(t *testing.T) {
	tsc := slackTypesCompiler(t)
	problems, err := checkSlackTypes(tsc, "testdata", slackTypesExcluded, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestSlackTypesRefuses holds the check itself to account: a golden
// with a block type Slack's definitions do not know, and a plan task
// with a status they do not know, are each reported, naming the golden,
// the line or the task, and what is wrong.
func TestSlackTypesRefuses(t *testing.T) {
	tsc := slackTypesCompiler(t)
	root := t.TempDir()
	// Each golden is indented as TestGolden writes them, so the lines
	// reported can be counted here.
	goldens := map[string]string{
		"render/good.json":          `{"text": "ok", "blocks": [{"type": "divider"}]}`,
		"render/bad_block.json":     `{"text": "ok", "blocks": [{"type": "dividr"}]}`,
		"render/bad_task.json":      `{"text": "ok", "blocks": [{"type": "plan", "title": "Steps", "tasks": [{"type": "task_card", "task_id": "1", "title": "T", "status": "done"}]}]}`,
		"render/bad_view.json":      `{"type": "modal", "title": {"type": "plain_text", "text": "T"}, "blocks": [], "colour": "red"}`,
		"render/not_a_payload.json": `{"steps": 3}`,
	}
	for name, body := range goldens {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(body), "", "  "); err != nil {
			t.Fatal(err)
		}
		goldens[name] = buf.String() + "\n"
	}
	goldens["fuzz/FuzzX/corpus"] = "go test fuzz v1\nstring(\"x\")\n"
	for name, body := range goldens {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	excluded := map[string]string{"fuzz": "not sent", "render/not_a_payload.json": "not sent"}
	problems, err := checkSlackTypes(tsc, root, excluded, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"render/bad_block.json line 5, as a message of KnownBlock: error TS2820: Type '\"dividr\"'",
		"render/bad_task.json blocks[0].tasks[0], as a plan task of TaskCardBlock, its status optional: error TS2322: Type '\"done\"'",
		"render/bad_view.json line 8, as views.open arguments: error TS2353",
		"render/bad_view.json line 8, as a ModalView of KnownBlock: error TS2353",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem reported as %q; got:\n%s", want, all)
		}
	}
	for _, p := range problems {
		if strings.Contains(p, "good.json") {
			t.Errorf("a good golden reported: %s", p)
		}
	}

	delete(excluded, "render/not_a_payload.json")
	if _, err := checkSlackTypes(tsc, root, excluded, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not_a_payload.json: neither a message") {
		t.Errorf("a file that is no payload and not excluded: %v, want it named", err)
	}
	excluded["render/gone.json"] = "was here once"
	if _, err := checkSlackTypes(tsc, root, excluded, t.TempDir()); err == nil || !strings.Contains(err.Error(), "render/gone.json, which does not exist") {
		t.Errorf("an exclusion of nothing: %v, want it named", err)
	}
}

// checkSlackTypes type-checks every golden under root but those
// excluded, writing the .ts files into dir, and returns what tsc found
// wrong, each naming its golden. An error is a golden it cannot check.
func checkSlackTypes(tsc, root string, excluded map[string]string, dir string) ([]string, error) {
	goldens, err := slackGoldens(root, excluded)
	if err != nil {
		return nil, err
	}
	// tsc finds the packages by climbing from each file to a node_modules.
	if err := os.Symlink(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(tsc))), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		return nil, err
	}
	files := map[string]tsFile{}
	for _, g := range goldens {
		raw, err := os.ReadFile(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		if err := writeTS(dir, g, raw, files); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", root, g, err)
		}
	}
	out, err := runTSC(tsc, dir)
	if err == nil {
		return nil, nil
	}
	diags := parseTSC(out)
	if len(diags) == 0 {
		return nil, fmt.Errorf("tsc failed without a diagnostic (%v):\n%s", err, out)
	}
	var problems []string
	for _, d := range diags {
		f, ok := files[d.file]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s(%d): %s", d.file, d.line, d.text))
			continue
		}
		where := fmt.Sprintf("line %d", d.line+f.offset)
		if p, ok := f.paths[d.line]; ok {
			where = p
		}
		problems = append(problems, fmt.Sprintf("%s/%s %s, as %s: %s", root, f.golden, where, f.method, d.text))
	}
	return problems, nil
}

// slackTypesCompiler returns the pinned tsc, or skips saying why not.
func slackTypesCompiler(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed, so Slack's TypeScript definitions cannot be checked against (.ci/install-slack-types installs them with npm)")
	}
	dir := os.Getenv("GONOGO_SLACK_TYPES_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no GONOGO_SLACK_TYPES_DIR and no home directory to find Slack's TypeScript definitions in: %v", err)
		}
		dir = filepath.Join(home, ".cache", "gonogo", "slack-types")
	}
	tsc := filepath.Join(dir, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Skipf("Slack's TypeScript definitions are not installed in %s: run .ci/install-slack-types (%v)", dir, err)
	}
	pinned, err := os.ReadFile(filepath.Join("..", ".ci", "slack-types", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if installed, _ := os.ReadFile(filepath.Join(dir, "package-lock.json")); !bytes.Equal(installed, pinned) {
		t.Skipf("the TypeScript packages in %s are not the pinned ones of .ci/slack-types: run .ci/install-slack-types", dir)
	}
	return tsc
}

// slackGoldens lists the files under root, relative to it, less those
// excluded (a file, or a folder and all under it). An exclusion that
// names nothing is an error: it would hide the next file of that name.
func slackGoldens(root string, excluded map[string]string) ([]string, error) {
	used := map[string]bool{}
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := excluded[rel]; ok {
			used[rel] = true
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for rel := range excluded {
		if !used[rel] {
			return nil, fmt.Errorf("slackTypesExcluded names %s/%s, which does not exist", root, rel)
		}
	}
	slices.Sort(out)
	return out, nil
}

// writeTS writes the .ts files that check one golden, and records them in
// files by name.
func writeTS(dir, golden string, raw []byte, files map[string]tsFile) error {
	var shape struct {
		Type   string            `json:"type"`
		Blocks []json.RawMessage `json:"blocks"`
		Text   *string           `json:"text"`
	}
	if err := json.Unmarshal(raw, &shape); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var methods []tsMethod
	switch {
	case shape.Type == "modal":
		methods = tsViewMethods
	case shape.Type == "" && shape.Text != nil && shape.Blocks != nil:
		methods = tsMessageMethods
	default:
		return fmt.Errorf("neither a message (text and blocks) nor a modal view: check it here as the Slack type it is sent as, or list it in slackTypesExcluded with why")
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if lines[0] != "{" || lines[len(lines)-1] != "}" {
		return fmt.Errorf("not an indented JSON object, as TestGolden writes them")
	}
	base := strings.TrimSuffix(strings.ReplaceAll(golden, "/", "__"), ".json")
	for i, m := range methods {
		// Line 1 imports; line 2 opens the literal in place of the golden's
		// "{", so the golden's line n is the file's line n+1.
		closing := "}"
		if strings.HasSuffix(m.fields, "{") {
			closing = "}}"
		}
		src := "import type { " + m.imp + " } from '" + m.from + "';\n" +
			"export const golden: " + m.typ + " = {" + m.fields + "\n" +
			strings.Join(lines[1:len(lines)-1], "\n") + "\n" + closing + ";\n"
		name := fmt.Sprintf("%s.%d.ts", base, i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
		files[name] = tsFile{golden: golden, method: m.name, offset: -1}
	}
	return writeTaskCards(dir, base, golden, shape.Blocks, files)
}

// writeTaskCards assigns each task of each plan block to TaskCardBlock
// (its status optional, as Slack documents it) on a line of its own:
// PlanBlock's own type lets any object pass as a task.
func writeTaskCards(dir, base, golden string, blocks []json.RawMessage, files map[string]tsFile) error {
	var b strings.Builder
	b.WriteString("import type { TaskCardBlock } from '@slack/types';\n" +
		"type DocumentedTaskCard = Omit<TaskCardBlock, 'status'> & Partial<Pick<TaskCardBlock, 'status'>>;\n")
	paths := map[int]string{}
	line := 2
	for i, raw := range blocks {
		var plan struct {
			Type  string            `json:"type"`
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal(raw, &plan); err != nil || plan.Type != "plan" {
			continue
		}
		for j, task := range plan.Tasks {
			var compact bytes.Buffer
			if err := json.Compact(&compact, task); err != nil {
				return err
			}
			line++
			paths[line] = fmt.Sprintf("blocks[%d].tasks[%d]", i, j)
			fmt.Fprintf(&b, "export const task_%d_%d: DocumentedTaskCard = %s;\n", i, j, compact.String())
		}
	}
	if line == 2 {
		return nil
	}
	name := base + ".task_card.ts"
	files[name] = tsFile{golden: golden, method: "a plan task of TaskCardBlock, its status optional", paths: paths}
	return os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
}

// runTSC type-checks every .ts file in dir, strictly, emitting nothing.
func runTSC(tsc, dir string) (string, error) {
	config := `{"compilerOptions": {"strict": true, "noEmit": true, "skipLibCheck": true, "noErrorTruncation": true,
  "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "types": []}, "include": ["*.ts"]}`
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(config), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(tsc, "--noEmit", "--strict", "--pretty", "false", "-p", dir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tscDiag is one tsc diagnostic: its file, line and message (with the
// indented lines that explain it).
type tscDiag struct {
	file string
	line int
	text string
}

var tscLine = regexp.MustCompile(`^(.+?\.ts)\((\d+),\d+\): (error .*)$`)

func parseTSC(out string) []tscDiag {
	var diags []tscDiag
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := tscLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			diags = append(diags, tscDiag{file: filepath.Base(m[1]), line: n, text: m[3]})
			continue
		}
		if len(diags) > 0 && strings.TrimSpace(l) != "" {
			diags[len(diags)-1].text += "\n" + l
		}
	}
	return diags
}
