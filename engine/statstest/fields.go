package statstest

import "github.com/gonogo/gonogo/engine"

// StatsFields keeps of sr only what engine.ComputeStats and
// engine.StatsCache read, which an engine.StatsRunsReader must give (its
// doc comment lists them): a store's reader that decodes only these
// gives StatsFields of the run as the store holds it, and ComputeStats
// over StatsFields of runs gives what it gives over the runs.
func StatsFields(sr engine.StatsRun) engine.StatsRun {
	out := engine.StatsRun{Versions: sr.Versions}
	if r := sr.Run; r != nil {
		out.Run = &engine.Run{ID: r.ID, State: r.State, Updated: r.Updated, Seq: r.Seq}
		if r.Steps != nil {
			out.Run.Steps = make([]engine.Step, len(r.Steps))
			for i, st := range r.Steps {
				out.Run.Steps[i] = engine.Step{StepDef: &engine.StepDef{N: st.N, Skill: st.Skill}, StepState: &engine.StepState{}}
			}
		}
	}
	if sr.Journal != nil {
		out.Journal = make([]engine.Event, len(sr.Journal))
		for i, ev := range sr.Journal {
			out.Journal[i] = StatsEvent(ev)
		}
	}
	return out
}

// StatsEvent keeps of ev only what the stats read (see StatsFields).
func StatsEvent(ev engine.Event) engine.Event {
	out := engine.Event{Seq: ev.Seq, Time: ev.Time, Type: ev.Type, Step: ev.Step, Attempt: ev.Attempt,
		Actor: ev.Actor, Decision: ev.Decision, Feedback: ev.Feedback, Status: ev.Status, Result: ev.Result,
		Artifact: ev.Artifact, CostUSD: ev.CostUSD, Skill: ev.Skill, Agent: ev.Agent, Runner: ev.Runner,
		Setup: ev.Setup}
	if ev.Start != nil {
		out.Start = &engine.RunStart{Setup: ev.Start.Setup}
	}
	return out
}
