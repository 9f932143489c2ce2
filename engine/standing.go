package engine

// Stand is where a run stands, for people: its state, told apart where
// people act differently on it.
type Stand string

// The stands of a run.
const (
	StandRunning     Stand = "running"     // a step runs, or is about to start
	StandWaiting     Stand = "waiting"     // steps wait for people's decisions
	StandHalted      Stand = "halted"      // a FAILED step that gonogo does not retry waits on people
	StandInterrupted Stand = "interrupted" // a step was lost while it ran; redo it or abort
	StandRetrying    Stand = "retrying"    // nothing waits on people; a FAILED step waits for gonogo's retry
	StandPaused      Stand = "paused"      // a person's pause holds the run: nothing runs, no step starts
	StandCompleted   Stand = "completed"
	StandAborted     Stand = "aborted"
)

// Standing is how a run stands, the one answer that show, the Slack
// header, the terminal and the export put into words.
type Standing struct {
	Stand Stand
	// At is the step that holds the run: the one interrupted, halted or
	// retrying, or the first that waits for a decision; nil when none.
	At *Step
	// Running and Waiting are the steps running now and those waiting for
	// a person's decision (interrupted ones included), in step order.
	Running, Waiting []*Step
	// PausedByPerson: a person paused the run (see Run.PausedByPerson);
	// while its steps still run the stand stays running.
	PausedByPerson bool
	// RateLimited: gonogo holds the run while an agent's rate limit is
	// waited out (Run.PauseReason says why).
	RateLimited bool
}

// StandingOf is how r stands. Of the steps that hold a waiting run, an
// interrupted one comes first, then a FAILED one people must decide on,
// then one waiting for a decision, then one gonogo retries by itself.
func StandingOf(r *Run) Standing {
	st := Standing{PausedByPerson: r.PausedByPerson(), RateLimited: r.Paused && r.PausedBy == RateLimitActor && !r.Finished()}
	retrying := st.sortSteps(r)
	if stand, ok := stateStands[r.State]; ok {
		st.Stand = stand
		return st
	}
	st.Stand, st.At = waitingStand(st.Waiting, retrying)
	if st.PausedByPerson {
		st.Stand = StandPaused
	}
	return st
}

// stateStands are the stands a run's state says alone; a waiting run
// stands as what holds it.
var stateStands = map[RunState]Stand{
	RunCompleted: StandCompleted,
	RunAborted:   StandAborted,
	RunRunning:   StandRunning,
}

// sortSteps lists r's running steps and those waiting on people in st,
// and returns the first step waiting for gonogo's retry (nil when none).
func (st *Standing) sortSteps(r *Run) *Step {
	var retrying *Step
	for i := range r.Steps {
		s := &r.Steps[i]
		switch {
		case s.Status == StepRunning:
			st.Running = append(st.Running, s)
		case waitsOnPeople(s):
			st.Waiting = append(st.Waiting, s)
		case s.Status == StepWaiting && retrying == nil:
			retrying = s
		}
	}
	return retrying
}

// waitingStand is what holds a waiting run, and where.
func waitingStand(waiting []*Step, retrying *Step) (Stand, *Step) {
	for _, s := range waiting {
		if s.Status == StepInterrupted {
			return StandInterrupted, s
		}
	}
	for _, s := range waiting {
		if latestFailed(s) {
			return StandHalted, s
		}
	}
	if len(waiting) > 0 {
		return StandWaiting, waiting[0]
	}
	if retrying != nil {
		return StandRetrying, retrying
	}
	return StandWaiting, nil
}
