package workflow

// ApprovalMoment is when a mode asks the approval gate (Run.Gate) whether
// a step goes on.
type ApprovalMoment string

const (
	// MomentIntent is after Stage 1 chose the action and before Stage 2
	// fills its parameters: a step under the intent rule may pause here.
	MomentIntent ApprovalMoment = "intent"
	// MomentCall is before the filled call runs, once its inputs resolve:
	// a call the policy holds pauses here unless an approval covers it.
	MomentCall ApprovalMoment = "call"
)

// Gate is what a mode knows when it asks whether a step may go on
// (Run.Gate): the moment, the call as it would run and where the round
// goes on after each answer.
type Gate struct {
	Moment     ApprovalMoment
	Action     string
	Objective  string
	Parameters map[string]any
	Documents  []string
	Connection string
	// Selection is Stage 1's decision, whose parametersContext and fields
	// a reviewer of an intent approval sees (nil for a planned step).
	Selection *Selection
	// Resume is the checkpoint the step resumes from once approved (the
	// Stage 2 phase at the intent moment); nil keeps the current one.
	Resume *Checkpoint
	// Reject is the checkpoint the round goes on from after a rejection
	// (the step after this one); nil is a fresh select.
	Reject *Checkpoint
	// Probe, at the intent moment only, asks without acting: nothing is
	// committed, and Verdict.Paused says whether the step would pause
	// (an early Stage 2 starts only when it would not).
	Probe bool
}

// Verdict is the approval gate's answer: the round paused (the mode
// returns at once; the run ends), or the step proceeds under Grant.
type Verdict struct {
	// Paused reports that the round was committed awaiting approval.
	Paused bool
	// Grant is the approval the step proceeds under: decided by a person
	// for this step, or given by a standing approval (Grant.ApprovedBy
	// set). Nil when the step needed none, or when a standing intent
	// approval lets Stage 2 run (the filled call is judged again at the
	// call moment). A grant with parameters replaces the call's.
	Grant *ApprovalGrant
	// Constraints are the intent grant's: what Stage 2 is shown and must
	// satisfy (nil when none narrows it).
	Constraints map[string]any
	// Judge returns one "/<field>: message" line per value of params
	// Constraints reject (nil when none does, or there are none).
	Judge func(params map[string]any) []string
}

// ConstraintProblems is Judge(params): none when the verdict carries no
// constraints.
func (v Verdict) ConstraintProblems(params map[string]any) []string {
	if v.Judge == nil {
		return nil
	}
	return v.Judge(params)
}
