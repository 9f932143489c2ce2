package intake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gonogo/gonogo/internal/atomicfile"

	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// MaxSavedName is the longest name a chain is saved under as a workflow; a
// workflow file written by hand may have a name up to 128 characters.
const MaxSavedName = 64

// Dir is a workflows directory (GONOGO_WORKFLOWS_DIR): the named workflows
// runs start from and route steps continue with (it is the engine's
// WorkflowSource), and where a chain is saved as one. Reading a file's
// bytes is parse's; finding, listing and writing the files is Dir's, so
// that parse writes nothing and both front ends share one copy.
type Dir string

// Workflow reads the workflow name: <dir>/<name>.yaml, or <dir>/<name>.yml.
// The name must be a valid skill name (lower-case letters, digits and
// dashes), checked before the file system is touched; a file with a "name"
// key must give this name. An unknown name is an *engine.Refusal (reason
// "unknown-workflow") listing the workflows in the directory and offering
// close names; a missing directory is an error wrapping fs.ErrNotExist.
// Otherwise it returns what parse.WorkflowFile returns, with the file's
// path as Source.
func (d Dir) Workflow(name string) (engine.WorkflowSpec, error) {
	if err := parse.CheckWorkflowName(name); err != nil {
		return engine.WorkflowSpec{}, err
	}
	found, err := d.files(name)
	if err != nil {
		return engine.WorkflowSpec{}, err
	}
	switch len(found) {
	case 0:
		return engine.WorkflowSpec{}, d.notFound(name)
	case 2:
		return engine.WorkflowSpec{}, &engine.Refusal{Reason: engine.RefuseInvalidWorkflow, Source: name,
			Message: fmt.Sprintf("both %s and %s exist: keep one", found[0], found[1])}
	}
	src, err := readWorkflow(found[0])
	if err != nil {
		return engine.WorkflowSpec{}, err
	}
	return parse.WorkflowFile(src, found[0], name)
}

// files returns the regular files of the workflow name, one for each
// extension it is saved under.
func (d Dir) files(name string) ([]string, error) {
	var found []string
	for _, ext := range parse.WorkflowExtensions {
		p := filepath.Join(string(d), name+ext)
		info, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("workflow %q: %w", name, err)
		case !info.Mode().IsRegular():
			// A directory or device named like a workflow is not one;
			// List leaves it out too.
		default:
			found = append(found, p)
		}
	}
	return found, nil
}

// List returns the names of the workflows in the directory, sorted: the
// .yaml and .yml files whose base name is a valid workflow name. Other
// files, hidden files and directories are not workflows and are left out.
// A missing directory is an error wrapping fs.ErrNotExist.
func (d Dir) List() ([]string, error) {
	entries, err := os.ReadDir(string(d))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("workflows directory %q does not exist; set GONOGO_WORKFLOWS_DIR: %w", string(d), err)
		}
		return nil, fmt.Errorf("reading workflows directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if stem, ok := d.workflowName(e); ok {
			names = append(names, stem)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// workflowName returns the workflow name of a directory entry, when it is
// a workflow: a .yaml or .yml file, or a link to one, named by a valid name.
func (d Dir) workflowName(e fs.DirEntry) (string, bool) {
	stem, ok := parse.WorkflowStem(e.Name())
	if !ok || !engine.ValidSkillName(stem) || e.IsDir() {
		return "", false
	}
	if e.Type()&fs.ModeSymlink != 0 {
		info, err := os.Stat(filepath.Join(string(d), e.Name()))
		if err != nil || !info.Mode().IsRegular() {
			return "", false
		}
	}
	return stem, true
}

// Find returns the file of the workflow name in the directory (.yaml, else
// .yml), if there is one: the name is taken, and Save replaces that file
// only when told to.
func (d Dir) Find(name string) (fs.FileInfo, bool) {
	for _, ext := range parse.WorkflowExtensions {
		if info, err := os.Stat(filepath.Join(string(d), name+ext)); err == nil {
			return info, true
		}
	}
	return nil, false
}

// Save writes a workflow file to <dir>/<name>.yaml, atomically. It refuses
// to replace an existing workflow of that name (as .yaml or .yml) unless
// replace is set (then the existing file is the one replaced), and creates
// the directory when it is missing. It returns the path written.
func (d Dir) Save(name string, src []byte, replace bool) (string, error) {
	dir := string(d)
	if !engine.ValidSkillName(name) {
		return "", fmt.Errorf("invalid workflow name %q: use lower-case letters, digits and dashes", name)
	}
	if dir == "" {
		return "", ErrNoWorkflows
	}
	path, err := d.savePath(name, replace)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the workflows directory: %w", err)
	}
	tmp, err := atomicfile.Prepare(dir, "."+name+".*.tmp", src)
	if err != nil {
		return "", fmt.Errorf("save workflow %q: %w", name, err)
	}
	defer os.Remove(tmp)
	if err := place(tmp, path, name, replace); err != nil {
		return "", err
	}
	return path, nil
}

// savePath is the file Save writes the workflow name to: the existing one
// when replace is set, else a new .yaml file.
func (d Dir) savePath(name string, replace bool) (string, error) {
	info, ok := d.Find(name)
	if !ok {
		return filepath.Join(string(d), name+".yaml"), nil
	}
	p := filepath.Join(string(d), info.Name())
	if !replace {
		return "", fmt.Errorf("workflow %q exists already (%s): %w", name, p, fs.ErrExist)
	}
	// Replaced where it is: a second file of the same name would make
	// the workflow ambiguous.
	return p, nil
}

// place moves the written file tmp to path, replacing a file there only
// when replace is set.
func place(tmp, path, name string, replace bool) error {
	var err error
	switch {
	case replace:
		err = os.Rename(tmp, path)
	default:
		// A link, unlike a rename, fails when the name is taken: two saves
		// of one new name at the same moment cannot both succeed.
		if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workflow %q exists already (%s): %w", name, path, fs.ErrExist)
		}
	}
	if err != nil {
		return fmt.Errorf("save workflow %q: %w", name, err)
	}
	return nil
}

// notFound refuses a workflow name with no file behind it, naming the
// workflows there are and offering close names.
func (d Dir) notFound(name string) error {
	names, err := d.List()
	if err != nil {
		return err
	}
	r := &engine.Refusal{Reason: engine.RefuseUnknownWorkflow, Source: name}
	var b strings.Builder
	fmt.Fprintf(&b, "no workflow %q in %s", name, string(d))
	if s := engine.Suggest(name, names); len(s) > 0 {
		r.Suggestions = map[string][]string{name: s}
		fmt.Fprintf(&b, " (did you mean `%s`?)", strings.Join(s, "`, `"))
	}
	if len(names) == 0 {
		b.WriteString("; the directory holds no workflow (.yaml or .yml) files")
	} else {
		fmt.Fprintf(&b, "; the workflows there: %s", strings.Join(names, ", "))
	}
	r.Message = b.String()
	return r
}

// readWorkflow reads a workflow file, but never more than one byte past
// parse.WorkflowMaxBytes: parse refuses a larger one without holding it.
func readWorkflow(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading workflow: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, parse.WorkflowMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading workflow %s: %w", path, err)
	}
	return src, nil
}

// ChainWorkflow writes a chain as a workflow file named name: one step per
// skill, each depending on the one before it. The chain's context is not
// kept (a workflow is given its context when it runs); run flags (--auto,
// --dry-run) are not part of a workflow either. A threaded chain hands each
// step the output of the one before it with {{steps.ID.output}}. A skill
// named twice gets ids skill, skill-2, ...
//
// The file is checked by reading it back, so what it writes always loads.
func ChainWorkflow(name string, chain engine.ChainExpr) ([]byte, error) {
	if !engine.ValidSkillName(name) || len(name) > MaxSavedName {
		return nil, fmt.Errorf("invalid workflow name %q: use lower-case letters, digits and dashes (at most %d)", name, MaxSavedName)
	}
	if len(chain.Names) == 0 {
		return nil, errors.New("the chain names no skill")
	}
	var b strings.Builder
	writeChainHeader(&b, name, chain)
	b.WriteString("steps:\n")
	writeChainSteps(&b, chain)
	src := []byte(b.String())
	if _, err := parse.Workflow(src, name); err != nil {
		return nil, fmt.Errorf("the saved workflow does not read back: %w", err)
	}
	return src, nil
}

// writeChainHeader writes what a chain saved as a workflow opens with: where
// it came from and how to run it (as comments), its name and description.
func writeChainHeader(b *strings.Builder, name string, chain engine.ChainExpr) {
	saved := strings.Join(chain.Names, " -> ")
	if chain.Flags.Thread {
		saved += " --thread"
	}
	fmt.Fprintf(b, "# Saved from the chain: %s\n", saved)
	fmt.Fprintf(b, "# Run it: gonogo run --workflow %s   (Slack: /gonogo run %s -- CONTEXT)\n", name, name)
	fmt.Fprintf(b, "name: %s\n", name)
	fmt.Fprintf(b, "description: %s\n\n", yamlString("The chain "+strings.Join(chain.Names, " -> ")+", saved as a workflow."))
}

// writeChainSteps writes the steps list of a chain saved as a workflow.
func writeChainSteps(b *strings.Builder, chain engine.ChainExpr) {
	taken := map[string]bool{}
	prev := ""
	for _, skill := range chain.Names {
		id := skill
		for n := 2; taken[id]; n++ {
			id = fmt.Sprintf("%s-%d", skill, n)
		}
		taken[id] = true
		fmt.Fprintf(b, "  - id: %s\n    skill: %s\n", id, skill)
		if prev != "" {
			fmt.Fprintf(b, "    depends_on: [%s]\n", prev)
			if chain.Flags.Thread {
				fmt.Fprintf(b, "    prompt: |\n      Work from the confirmed output of the step before:\n\n      {{steps.%s.output}}\n", prev)
			}
		}
		prev = id
	}
}

// yamlString quotes s as a YAML scalar: JSON's double-quoted strings are
// YAML too.
func yamlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// Args reads a workflow's --arg NAME=VALUE flags; a malformed or
// repeated one is refused by its flag.
func Args(list []string) (map[string]string, error) {
	args := map[string]string{}
	for _, a := range list {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--arg %q: expected NAME=VALUE", a)
		}
		if _, dup := args[k]; dup {
			return nil, fmt.Errorf("--arg %s given twice", k)
		}
		args[k] = v
	}
	return args, nil
}

// SaveChain saves chain as workflow name (see ChainWorkflow, Save) when it
// would run: pre-flight with cat and pol passes (its skills are installed
// and allowed), else its refusal comes back. It returns the path written.
func (d Dir) SaveChain(name string, chain engine.ChainExpr, cat engine.Catalog, pol engine.Policy, replace bool) (string, error) {
	if _, err := engine.PreflightChain(chain, cat, pol); err != nil {
		return "", err
	}
	src, err := ChainWorkflow(name, chain)
	if err != nil {
		return "", err
	}
	return d.Save(name, src, replace)
}
