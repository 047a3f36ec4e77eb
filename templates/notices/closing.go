package notices

// Done is one step a round carried out, as a closing message lists it:
// its step number, action, status and summary, and the documents it
// produced. The caller words an empty action or status as it wants them
// shown. MaxSteps and PlanDone list each on a line
// "<step>. <action> (<status>): <summary>", followed by one line
// "   - document <name> (docItem:<id>:<name>)" per document (done_list.tmpl).
type Done struct {
	Step      int
	Action    string
	Status    string
	Summary   string
	Documents []Doc
}

// Doc is a document a step produced: its ID and file name, listed with
// its docItem reference.
type Doc struct {
	ID   string
	Name string
}

// MaxSteps is the closing message of a round that hit its limit of limit
// steps: the limit, the steps done (or that none was), and how to go on.
func MaxSteps(limit int, done []Done) string {
	return render("max_steps", struct {
		Limit int
		Done  []Done
	}{limit, done})
}

// PlanDone is the closing message of an action plan run to its end: how
// many steps were carried out, how many of them failed, and the steps.
func PlanDone(done []Done, failed int) string {
	return render("plan_done", struct {
		Done   []Done
		Failed int
	}{done, failed})
}

// PlanUnavailable is the closing message of a round whose plan was
// unusable: why, and an excerpt of the model's reply (quoted; "" is said
// to be an empty reply). The caller cuts the excerpt.
func PlanUnavailable(why, reply string) string {
	return render("plan_unavailable", struct {
		Why   string
		Reply string
	}{why, reply})
}

// Interrupted is the closing message of round, ended at step by an
// interrupting round.
func Interrupted(round, step int) string {
	return render("interrupted", struct {
		Round int
		Step  int
	}{round, step})
}

// BudgetStop is the closing message of a round stopped because its
// user's budget is spent; reason is the budget error's text.
func BudgetStop(reason string) string {
	return render("budget_stop", reason)
}
