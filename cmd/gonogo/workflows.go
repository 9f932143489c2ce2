package main

import (
	"github.com/gonogo/gonogo/engine"
	"github.com/gonogo/gonogo/parse"
)

// workflowDir is the workflows directory (GONOGO_WORKFLOWS_DIR) as the
// engine reads it: the workflows a route step may continue with.
type workflowDir string

func (d workflowDir) Workflow(name string) (engine.WorkflowSpec, error) {
	return parse.LoadWorkflow(string(d), name)
}
