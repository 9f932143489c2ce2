package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gonogo/gonogo/engine"
)

// ChainWorkflow writes a chain as a workflow file named name: one step per
// skill, each depending on the one before it. The chain's context is not
// kept (a workflow is given its context when it runs); run flags (--auto,
// --dry-run) are not part of a workflow either. A threaded chain hands each
// step the output of the one before it with {{steps.ID.output}}. A skill
// named twice gets ids skill, skill-2, ...
//
// The file is checked by reading it back, so what it writes always loads.
func ChainWorkflow(name string, chain engine.ChainExpr) ([]byte, error) {
	if !engine.ValidSkillName(name) || len(name) > workflowMaxNameLen {
		return nil, fmt.Errorf("invalid workflow name %q: use lower-case letters, digits and dashes (at most %d)", name, workflowMaxNameLen)
	}
	if len(chain.Names) == 0 {
		return nil, errors.New("the chain names no skill")
	}
	var b strings.Builder
	saved := strings.Join(chain.Names, " -> ")
	if chain.Flags.Thread {
		saved += " --thread"
	}
	fmt.Fprintf(&b, "# Saved from the chain: %s\n", saved)
	fmt.Fprintf(&b, "# Run it: gonogo run --workflow %s   (Slack: /gonogo run %s -- CONTEXT)\n", name, name)
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "description: %s\n\n", yamlString("The chain "+strings.Join(chain.Names, " -> ")+", saved as a workflow."))
	b.WriteString("steps:\n")
	taken := map[string]bool{}
	prev := ""
	for _, skill := range chain.Names {
		id := skill
		for n := 2; taken[id]; n++ {
			id = fmt.Sprintf("%s-%d", skill, n)
		}
		taken[id] = true
		fmt.Fprintf(&b, "  - id: %s\n    skill: %s\n", id, skill)
		if prev != "" {
			fmt.Fprintf(&b, "    depends_on: [%s]\n", prev)
			if chain.Flags.Thread {
				fmt.Fprintf(&b, "    prompt: |\n      Work from the confirmed output of the step before:\n\n      {{steps.%s.output}}\n", prev)
			}
		}
		prev = id
	}
	src := []byte(b.String())
	if _, err := Workflow(src, name); err != nil {
		return nil, fmt.Errorf("the saved workflow does not read back: %w", err)
	}
	return src, nil
}

// SaveWorkflow writes a workflow file to <dir>/<name>.yaml, atomically. It
// refuses to replace an existing workflow of that name (as .yaml or .yml)
// unless replace is set (then the existing file is the one replaced), and
// creates dir when it is missing. It returns the path written.
func SaveWorkflow(dir, name string, src []byte, replace bool) (string, error) {
	if !engine.ValidSkillName(name) {
		return "", fmt.Errorf("invalid workflow name %q: use lower-case letters, digits and dashes", name)
	}
	if dir == "" {
		return "", errors.New("no workflows directory: set GONOGO_WORKFLOWS_DIR")
	}
	path := filepath.Join(dir, name+".yaml")
	for _, ext := range []string{".yaml", ".yml"} {
		p := filepath.Join(dir, name+ext)
		if _, err := os.Stat(p); err == nil {
			if !replace {
				return "", fmt.Errorf("workflow %q exists already (%s): %w", name, p, fs.ErrExist)
			}
			// Replaced where it is: a second file of the same name would
			// make the workflow ambiguous.
			path = p
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the workflows directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("save workflow %q: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(src); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	switch {
	case err != nil:
	case replace:
		err = os.Rename(tmp.Name(), path)
	default:
		// A link, unlike a rename, fails when the name is taken: two saves
		// of one new name at the same moment cannot both succeed.
		if err = os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("workflow %q exists already (%s): %w", name, path, fs.ErrExist)
		}
	}
	if err != nil {
		return "", fmt.Errorf("save workflow %q: %w", name, err)
	}
	return path, nil
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
