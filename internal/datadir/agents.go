package datadir

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/gonogo/gonogo/internal/runner"
)

// AgentsDir is where running agents are recorded: <data>/agents.
func AgentsDir(data string) string { return filepath.Join(data, "agents") }

// ReapAgents kills the agents a gonogo that died left running on the data
// directory, and says so in log. The caller holds the store's lock.
func ReapAgents(data string, log *slog.Logger) {
	left, err := runner.ReapAgents(AgentsDir(data))
	for _, l := range left {
		log.Warn("stopped an agent left running by a gonogo that is gone",
			"run", l.Run, "step", l.Step, "attempt", l.Attempt, "agent", l.Cmd, "pgid", l.PGID, "pids", fmt.Sprint(l.PIDs),
			"started", l.Started.Local().Format(time.DateTime))
	}
	if err != nil {
		log.Warn("could not read every agent record", "dir", AgentsDir(data), "err", err)
	}
}
