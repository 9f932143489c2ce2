package parse

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/gonogo/gonogo/engine"
)

func (r *wfReader) steps(e wfEntry) []engine.WorkflowStep {
	if !r.stepsList(e) {
		return nil
	}
	var out []engine.WorkflowStep
	ids := map[string]int{}
	for i, item := range e.v.Content {
		item = catalogDeref(item)
		if !r.visit(item) {
			return out
		}
		if item.Kind != yaml.MappingNode {
			r.add(item.Line, "step %d: a step must be a mapping with at least id and skill, not a %s", i+1, kindName(item))
			continue
		}
		s := r.step(item, i+1)
		r.noteID(s, ids)
		out = append(out, s)
	}
	return out
}

// stepsList checks that "steps" is a list of one step or more, and not
// too many.
func (r *wfReader) stepsList(e wfEntry) bool {
	if e.v.Kind != yaml.SequenceNode {
		r.add(e.v.Line, "workflow: \"steps\" must be a list of steps, not a %s", kindName(e.v))
		return false
	}
	switch n := len(e.v.Content); {
	case n == 0:
		r.add(e.k.Line, "workflow: the steps list is empty: a workflow needs at least one step")
		return false
	case n > WorkflowMaxSteps:
		r.add(e.k.Line, "workflow: %d steps, over the limit of %d: split the workflow", n, WorkflowMaxSteps)
		return false
	}
	return true
}

// noteID records the id of step s in ids, which maps each id read so far
// to its step's line, and reports an id already used.
func (r *wfReader) noteID(s engine.WorkflowStep, ids map[string]int) {
	if s.ID == "" {
		return
	}
	if at, dup := ids[s.ID]; dup {
		r.add(s.Line, "step %q: the id is already used by the step at line %d", s.ID, at)
		return
	}
	ids[s.ID] = s.Line
}

// step reads one step; n is its 1-based place in the list, for messages
// about a step whose id cannot be read.
func (r *wfReader) step(m *yaml.Node, n int) engine.WorkflowStep {
	s := engine.WorkflowStep{Line: m.Line}
	// The id names the step in every other message, so it is read first.
	where := r.stepID(m, n, &s)
	entries := r.entries(m, workflowStepKeys, where)
	has := map[string]bool{}
	for _, e := range entries {
		has[e.key] = true
		r.stepField(e, where, &s)
	}
	if !has["id"] {
		r.add(m.Line, "%s has no id: give it one (lower-case letters, digits, '-' and '_')", where)
	}
	if !has["skill"] {
		r.add(m.Line, "%s has no skill: name the skill it runs", where)
	}
	r.stepConflicts(m, where, s)
	return s
}

// stepConflicts reports keys of step s that are each valid alone but cannot
// go together.
func (r *wfReader) stepConflicts(m *yaml.Node, where string, s engine.WorkflowStep) {
	if s.Fallback != "" && s.Fallback == s.Skill {
		r.add(m.Line, "%s: the fallback is the step's own skill; to run it again write on_error: {retry: 1}", where)
	}
	if s.Route && s.Decompose != "" {
		r.add(m.Line, "%s: a step either routes (route: true) or decomposes (decompose: ...), not both", where)
	}
	if len(s.BestOf) > 0 && (s.Route || s.Decompose != "") {
		r.add(m.Line, "%s: a route or decompose step cannot be best_of: its output changes the run, so one agent writes it", where)
	}
}

// stepID reads the step's id into s and returns how messages name the step:
// by its id when it is valid, else by its place.
func (r *wfReader) stepID(m *yaml.Node, n int, s *engine.WorkflowStep) string {
	where := fmt.Sprintf("step %d", n)
	e, found := workflowIDEntry(m)
	if !found {
		return where
	}
	id, ok := r.text(e, where)
	switch {
	case !ok:
	case !workflowIDRE.MatchString(id) || len(id) > workflowMaxNameLen:
		r.add(e.v.Line, "%s: id %q is not valid: ids are lower-case letters, digits, '-' and '_', starting with a letter or digit, at most %d characters", where, workflowClip(id), workflowMaxNameLen)
	default:
		s.ID = id
		where = fmt.Sprintf("step %q", id)
	}
	return where
}

// workflowIDEntry finds the first id key of the step m; a repeated one is
// reported by entries.
func workflowIDEntry(m *yaml.Node) (wfEntry, bool) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "id" {
			return wfEntry{key: "id", k: k, v: catalogDeref(m.Content[i+1])}, true
		}
	}
	return wfEntry{}, false
}

// stepField reads one key of a step into s.
func (r *wfReader) stepField(e wfEntry, where string, s *engine.WorkflowStep) {
	switch e.key {
	case "skill":
		s.Skill = r.skillName(e, where)
	case "prompt":
		s.Prompt, _ = r.optionalText(e, where)
	case "depends_on":
		s.DependsOn = r.dependsOn(e, where)
	case "gate":
		s.Gate = r.gate(e, where)
	case "preconditions":
		s.Pre = r.conditions(e, where, true)
	case "postconditions":
		s.Post = r.conditions(e, where, false)
	case "on_error":
		s.OnError = r.onError(e, where)
	case "timeout":
		s.Timeout = r.duration(e, where, false)
	case "optional":
		s.Optional = r.boolean(e, where)
	case "fallback":
		s.Fallback = r.skillName(e, where)
	case "runner":
		s.Options = r.runnerOptions(e, where)
	case "route":
		s.Route = r.boolean(e, where)
	case "decompose":
		s.Decompose = r.decompose(e, where)
	case "best_of":
		s.BestOf = r.bestOf(e, where)
	}
}

// gate reads a step's gate; a wrong one is reported and kept as
// engine.ParseGate returns it.
func (r *wfReader) gate(e wfEntry, where string) engine.Gate {
	g, ok := r.text(e, where)
	if !ok {
		return ""
	}
	gate, err := engine.ParseGate(g)
	if err != nil {
		r.add(e.v.Line, "%s: gate %q is not one of always, never, on-failure, on-empty", where, workflowClip(g))
	}
	return gate
}

// bestOf reads the runners a best-of step runs on: a list of names, or
// one text of names separated by commas. Whether gonogo has runners of
// those names is checked where the run starts.
func (r *wfReader) bestOf(e wfEntry, where string) []string {
	out, ok := r.bestOfNames(e, where)
	if !ok {
		return out
	}
	for _, n := range out {
		if !workflowOptionRE.MatchString(n) || len(n) > workflowMaxNameLen {
			r.add(e.v.Line, "%s: best_of names %q, which is not a runner name", where, workflowClip(n))
			return nil
		}
	}
	if len(out) < 2 {
		r.add(e.v.Line, "%s: best_of names %d runner; name at least two (the same one twice runs it twice)", where, len(out))
		return nil
	}
	return out
}

// bestOfNames reads the runner names of best_of as written; ok is false
// when the value is no list of names or reading it stopped early, so the
// names are not checked.
func (r *wfReader) bestOfNames(e wfEntry, where string) (out []string, ok bool) {
	switch {
	case e.v.Kind == yaml.ScalarNode && !isNull(e.v):
		return engine.ParseBestOf(e.v.Value), true
	case e.v.Kind == yaml.SequenceNode:
		return r.bestOfList(e.v.Content, where)
	}
	r.add(e.v.Line, "%s: \"best_of\" must list runner names (best_of: [claude, codex]), not a %s", where, kindName(e.v))
	return nil, false
}

// bestOfList reads best_of written as a list; ok is false when reading
// stopped early.
func (r *wfReader) bestOfList(items []*yaml.Node, where string) (out []string, ok bool) {
	for _, it := range items {
		it = catalogDeref(it)
		if !r.visit(it) {
			return out, false
		}
		if it.Kind != yaml.ScalarNode || isNull(it) {
			r.add(it.Line, "%s: best_of lists runner names, not a %s", where, kindName(it))
			continue
		}
		out = append(out, it.Value)
	}
	return out, true
}

func (r *wfReader) dependsOn(e wfEntry, where string) []string {
	var items []*yaml.Node
	switch {
	case isNull(e.v):
		return nil
	case e.v.Kind == yaml.ScalarNode:
		items = []*yaml.Node{e.v}
	case e.v.Kind == yaml.SequenceNode:
		items = e.v.Content
	default:
		r.add(e.v.Line, "%s: \"depends_on\" must be a step id or a list of step ids, not a %s", where, kindName(e.v))
		return nil
	}
	var out []string
	for _, it := range items {
		it = catalogDeref(it)
		if !r.visit(it) {
			return out
		}
		if id, ok := r.dependency(it, out, where); ok {
			out = append(out, id)
		}
	}
	return out
}

// dependency reads one item of depends_on: a valid step id not among
// those listed before it (earlier).
func (r *wfReader) dependency(it *yaml.Node, earlier []string, where string) (string, bool) {
	if it.Kind != yaml.ScalarNode || isNull(it) {
		r.add(it.Line, "%s: depends_on lists step ids, not a %s", where, kindName(it))
		return "", false
	}
	id := it.Value
	switch {
	case !workflowIDRE.MatchString(id) || len(id) > workflowMaxNameLen:
		r.add(it.Line, "%s: depends_on %q is not a step id (lower-case letters, digits, '-' and '_')", where, workflowClip(id))
	case slices.Contains(earlier, id):
		r.add(it.Line, "%s: depends_on lists %q twice", where, id)
	default:
		return id, true
	}
	return "", false
}

func (r *wfReader) onError(e wfEntry, where string) engine.ErrorPolicy {
	switch {
	case e.v.Kind == yaml.ScalarNode && !isNull(e.v):
		return r.onErrorWord(e, where)
	case e.v.Kind == yaml.MappingNode:
		return r.retryPolicy(e, where)
	}
	r.add(e.v.Line, "%s: on_error must be stop, gate or {retry: N, backoff: DURATION}, not a %s", where, kindName(e.v))
	return engine.ErrorPolicy{}
}

// onErrorWord reads on_error written as one word: stop or gate. A bare
// retry lacks its count.
func (r *wfReader) onErrorWord(e wfEntry, where string) engine.ErrorPolicy {
	switch e.v.Value {
	case string(engine.OnErrorStop):
		return engine.ErrorPolicy{Kind: engine.OnErrorStop}
	case string(engine.OnErrorGate):
		return engine.ErrorPolicy{Kind: engine.OnErrorGate}
	case string(engine.OnErrorRetry):
		r.add(e.v.Line, "%s: on_error retry needs a count: write on_error: {retry: 2, backoff: 5s}", where)
	default:
		r.add(e.v.Line, "%s: on_error %q is not one of stop, gate or {retry: N, backoff: DURATION}", where, workflowClip(e.v.Value))
	}
	return engine.ErrorPolicy{}
}

// retryPolicy reads on_error written as a mapping {retry: N, backoff: D}.
func (r *wfReader) retryPolicy(e wfEntry, where string) engine.ErrorPolicy {
	p := engine.ErrorPolicy{Kind: engine.OnErrorRetry}
	hasRetry := false
	for _, f := range r.entries(e.v, workflowOnErrorKeys, where+" on_error") {
		switch f.key {
		case "retry":
			hasRetry = true
			p.Retries = r.retries(f, where)
		case "backoff":
			p.Backoff = r.duration(f, where+" on_error", true)
		}
	}
	if !hasRetry {
		r.add(e.v.Line, "%s: on_error as a mapping needs retry: N", where)
	}
	return p
}

// retries reads the retry count of on_error, or 0 when it is no whole
// number in range.
func (r *wfReader) retries(f wfEntry, where string) int {
	var n int
	if f.v.Kind != yaml.ScalarNode || f.v.Tag != "!!int" || f.v.Decode(&n) != nil || n < 1 || n > workflowMaxRetries {
		r.add(f.v.Line, "%s: on_error retry must be a whole number from 1 to %d, not %s", where, workflowMaxRetries, workflowShow(f.v))
		return 0
	}
	return n
}

func (r *wfReader) runnerOptions(e wfEntry, where string) map[string]string {
	if isNull(e.v) {
		return nil
	}
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "%s: \"runner\" must map option names to values (model: NAME), not a %s", where, kindName(e.v))
		return nil
	}
	out := map[string]string{}
	seen := map[string]int{}
	for i := 0; i+1 < len(e.v.Content); i += 2 {
		k, v := e.v.Content[i], catalogDeref(e.v.Content[i+1])
		if !r.visit(k) {
			return out
		}
		if !r.optionName(k, seen, where) {
			continue
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			r.add(v.Line, "%s: runner option %q must be text, not a %s", where, k.Value, kindName(v))
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

// optionName checks a runner option's key: an option name given once.
// seen maps each name read so far to its line.
func (r *wfReader) optionName(k *yaml.Node, seen map[string]int, where string) bool {
	if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" || !workflowOptionRE.MatchString(k.Value) || len(k.Value) > workflowMaxNameLen {
		r.add(k.Line, "%s: runner option %s is not an option name (lower-case letters, digits, '-' and '_')", where, workflowShow(catalogDeref(k)))
		return false
	}
	if at, dup := seen[k.Value]; dup {
		r.add(k.Line, "%s: runner option %q is already given at line %d", where, k.Value, at)
		return false
	}
	seen[k.Value] = k.Line
	return true
}

func (r *wfReader) decompose(e wfEntry, where string) string {
	if e.v.Kind != yaml.MappingNode {
		r.add(e.v.Line, "%s: decompose must be a mapping {skill: NAME} naming the skill each task runs, not a %s", where, kindName(e.v))
		return ""
	}
	var skill string
	has := false
	for _, f := range r.entries(e.v, workflowDecomposeKeys, where+" decompose") {
		has = true
		skill = r.skillName(f, where+" decompose")
	}
	if !has {
		r.add(e.v.Line, "%s: decompose needs skill: NAME, the skill each task runs", where)
	}
	return skill
}
