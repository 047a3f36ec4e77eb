package bench

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twostep/twostep/workflow"
)

// The cost comparison's workloads (issues 34 and 46): each is a user
// request, its uploads and the replies a capable model writes at each
// step, given by step number. Stage 1's reply carries every key the
// template asks for: a one-sentence objective, a learning only when the
// last result taught something new (never at step 1), the document
// references, a parametersContext stating the facts Stage 2 needs (Stage 2
// sees nothing else), and the fields to fill — by name only where the
// parser takes that (DESIGN §10.1), else with the type, required flag and
// description today's template asks for.
//
// A reply takes its references and facts only from the prompt it answers
// (promptFacts): each docItem reference is looked up in the prompt by file
// name, and every figure of its learnings and context, and every fact the
// step names as its evidence, must be in the prompt; an answer built from
// several results (the recall workload's) is read out of the prompt. A
// prompt that forgets what the reply needs makes the call fail, which
// fails TestCostTable, rather than looking cheap.

// Actions of the workloads beside the gateway's built-ins.
const (
	NotesAction   = "notes.add"
	RecordsAction = "records.page"
)

// costStep is one step of a workload's script.
type costStep struct {
	action    string
	objective string
	learnings []string
	// docs are the indexes of the uploads the step reads: their docItem
	// references are read from the prompt by file name.
	docs []int
	// evidence are the facts the reply states that its prompt must show
	// (besides the figures of its learnings and context).
	evidence []string
	// answer, when set, writes the step's context and Stage 2 message
	// from the prompt (an answer that needs every earlier result): it
	// returns them and how many of the facts it needs the prompt shows.
	answer func(prompt string) (context, message string, shown, needed int)
	// derive, when set, adds to the context what Stage 1 works out from
	// the figures it shows (a total), once they are checked against the
	// prompt: a derived figure is not itself in the prompt.
	derive  func(context string) string
	context string
	fields  []workflow.FieldSpec
	// params are Stage 2's parameters (when Stage 2 is called).
	params map[string]any
}

// CostWorkload is one workload of the cost comparison.
type CostWorkload struct {
	Name    string
	Prompt  string
	Uploads []workflow.DocumentContent
	steps   []costStep
	// summary is the compaction reply when the history's entries through
	// step through leave it: what a capable model keeps of them (nil: the
	// workload is not expected to compact).
	summary func(through int) string
	// Answer is the final answer the run must end with.
	Answer string
	// Calls are the action calls the run must make, in order ("notes.add
	// <text>", "records.page <n>", "document.extract <file>").
	Calls []string
}

// Steps is the number of steps of the workload, the answer included.
func (w CostWorkload) Steps() int { return len(w.steps) }

// stage1Reply is the Stage 1 reply of step s to prompt, with the
// workload's uploads; lean reports, per action, whether the parser takes
// fields given by name only. shown and needed count the references and
// facts the reply takes from the prompt; err says what the prompt lacked.
func stage1Reply(s costStep, prompt string, uploads []workflow.DocumentContent, lean bool) (reply string, shown, needed int, err error) {
	refs := []string{}
	var missing []string
	for _, i := range s.docs {
		needed++
		ref := docItemIn(prompt, uploads[i].Name)
		if ref == "" {
			missing = append(missing, "a docItem reference for "+uploads[i].Name)
			continue
		}
		shown++
		refs = append(refs, ref)
	}
	if s.answer != nil {
		var n, k int
		s.context, s.params["message"], n, k = s.answer(prompt)
		shown, needed = shown+n, needed+k
		if n < k {
			missing = append(missing, fmt.Sprintf("%d of the %d results the answer needs", k-n, k))
		}
	}
	for _, fact := range append(slices.Clone(s.evidence), figures(strings.Join(append([]string{s.context}, s.learnings...), " "))...) {
		needed++
		if !strings.Contains(prompt, fact) {
			missing = append(missing, fmt.Sprintf("%q", fact))
			continue
		}
		shown++
	}
	if len(missing) > 0 {
		return "", shown, needed, fmt.Errorf("the prompt does not show %s", strings.Join(missing, ", "))
	}
	if s.derive != nil {
		s.context += s.derive(s.context)
	}
	return selectionJSON(s, refs, lean), shown, needed, nil
}

// selectionJSON is the Stage 1 reply of step s with the references refs.
func selectionJSON(s costStep, refs []string, lean bool) string {
	fields := []map[string]any{}
	for _, f := range s.fields {
		if lean {
			fields = append(fields, map[string]any{"name": f.Name})
			continue
		}
		fields = append(fields, map[string]any{"name": f.Name, "type": f.Type, "required": f.Required, "description": f.Description})
	}
	learnings := s.learnings
	if learnings == nil {
		learnings = []string{}
	}
	// The bench's user has no connections: the tool schema the model
	// answers has no "requiredConnection" (prompts.Stage1Output), and the
	// strict schema has every other key, empty lists included.
	// In the order the schema asks (DESIGN §11.2): the four keys Stage 2
	// is rendered from first.
	return mustJSON(struct {
		ActionObjective        string           `json:"actionObjective"`
		Action                 string           `json:"action"`
		ParametersContext      string           `json:"parametersContext"`
		ParametersSchema       map[string][]any `json:"parametersSchema"`
		Learnings              []string         `json:"learnings"`
		RequiredInputDocuments []string         `json:"requiredInputDocuments"`
	}{s.objective, s.action, s.context, map[string][]any{"fields": anySlice(fields)}, learnings, refs})
}

// docItemIn returns the docItem reference the prompt shows for the file
// name ("": none).
func docItemIn(prompt, name string) string {
	m := regexp.MustCompile(`docItem:[A-Za-z0-9_]+:` + regexp.QuoteMeta(name) + `(?:\s|\)|,|$)`).FindString(prompt)
	return strings.TrimRight(m, " \n\t),")
}

// figurePattern matches the figures a reply may state only when its
// prompt shows them: decimals and numbers of two or more digits.
var figurePattern = regexp.MustCompile(`\d+(?:[.,]\d+)+|\d{2,}`)

// figures returns the figures of text.
func figures(text string) []string { return figurePattern.FindAllString(text, -1) }

// stage2Reply is the Stage 2 reply of step s.
func stage2Reply(s costStep) string {
	params := s.params
	if params == nil {
		params = map[string]any{}
	}
	return mustJSON(map[string]any{"schema": "parameters_v1", "parameters": params})
}

func anySlice(fields []map[string]any) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = f
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the replies are maps of strings, numbers and lists
	}
	return string(b)
}

// answerStep ends the round with message, Stage 1 stating the facts.
func answerStep(objective string, learnings []string, context, message string) costStep {
	return costStep{action: workflow.CompleteAction, objective: objective, learnings: learnings, context: context,
		fields: []workflow.FieldSpec{{Name: "message", Type: "string", Required: true, Description: "The final answer to the user."}},
		params: map[string]any{"message": message}}
}

// CostWorkloads returns the six workloads: (a) eight short notes, then an
// answer; (b) three reports of 6 KB, each extracted, then an answer; (c)
// thirty pages of 400 characters, then an answer; (d) three documents of
// 60 KB, each extracted, then an answer; (e) recall: ten short invoices,
// each extracted by its reference, then an answer that needs every
// amount; (f) many files: twelve uploads, each extracted by its own
// docItem reference, then an answer.
func CostWorkloads() []CostWorkload {
	return []CostWorkload{notesWorkload(), documentsWorkload("3 reports of 6 KB", reports(6000), reportsAsk, reportsAnswer, reportFacts),
		pagesWorkload(), documentsWorkload("3 documents of 60 KB", contracts(60000), contractsAsk, contractsAnswer, contractFacts),
		recallWorkload(), manyFilesWorkload()}
}

var notes = []string{
	"Call the supplier on Monday about the delayed cooling units.",
	"Anna takes over the Berlin account from March.",
	"The budget review moved to Thursday 10:00.",
	"Order two more test rigs for the lab.",
	"Ask legal about the new data retention clause.",
	"Team lunch on Friday, table for eight.",
	"Renew the SSL certificate of the partner portal before the 20th.",
	"Send the Q3 figures to the board by Wednesday.",
}

func notesWorkload() CostWorkload {
	var list strings.Builder
	for i, n := range notes {
		fmt.Fprintf(&list, "\n%d. %s", i+1, n)
	}
	w := CostWorkload{Name: "8 short notes, then answer",
		Prompt: "Save each of these eight notes as a separate note, then tell me when you are done:" + list.String(),
		Answer: "All eight notes are saved."}
	for i, n := range notes {
		s := costStep{action: NotesAction, objective: fmt.Sprintf("Save note %d of 8.", i+1),
			context:  fmt.Sprintf("Note %d of the user's list: %s", i+1, n),
			fields:   []workflow.FieldSpec{{Name: "text", Type: "string", Required: true, Description: "The note's text, as the user wrote it."}},
			params:   map[string]any{"text": n},
			evidence: []string{n}}
		if i > 0 { // the previous save's confirmation
			s.evidence = append(s.evidence, fmt.Sprintf("Saved note %d", i))
		}
		if i == 1 {
			s.learnings = []string{"notes.add confirms each saved note with its number."}
		}
		w.steps = append(w.steps, s)
		w.Calls = append(w.Calls, NotesAction+" "+n)
	}
	answer := answerStep("Tell the user that the eight notes are saved.", nil,
		"All 8 notes were saved; each save was confirmed.", w.Answer)
	for i := range notes {
		answer.evidence = append(answer.evidence, fmt.Sprintf("Saved note %d", i+1))
	}
	w.steps = append(w.steps, answer)
	return w
}

// pageCount is the number of pages of the pages workload; outagePage the
// one that records the outage.
const (
	pageCount  = 30
	outagePage = 17
)

// PageText is page n of the incident log: 400 characters.
func PageText(n int) string {
	event := fmt.Sprintf("%02d:15 deploy of billing-api v2.%d.1 finished, error rate 0.%d %%.", 8+n%10, n, n%7)
	if n == outagePage {
		event = "14:02 OUTAGE: payments-api answered 503 for 23 minutes; cause: an expired TLS certificate."
	}
	s := fmt.Sprintf("Incident log, page %d of %d. %s Queue depth stayed under %d messages; on-call acknowledged every alert "+
		"within %d minutes. Backups of the orders database completed at 02:%02d and were verified. Disk usage on the "+
		"log cluster is %d %%. No customer tickets were linked to this page's events.", n, pageCount, event, 100+n*7, 2+n%5, n, 40+n)
	return (s + strings.Repeat(" .", 200))[:400]
}

func pagesWorkload() CostWorkload {
	w := CostWorkload{Name: "30 steps of 400-character results, then answer",
		Prompt: fmt.Sprintf("Read the %d pages of the incident log one by one with records.page, then tell me which page records the outage and its cause.", pageCount),
		Answer: fmt.Sprintf("Page %d records the outage: payments-api answered 503 for 23 minutes from 14:02 because of an expired TLS certificate.", outagePage)}
	for n := 1; n <= pageCount; n++ {
		s := costStep{action: RecordsAction, objective: fmt.Sprintf("Read page %d of the incident log.", n),
			context: fmt.Sprintf("Page %d of %d.", n, pageCount),
			fields:  []workflow.FieldSpec{{Name: "page", Type: "number", Required: true, Description: "The page number to read."}},
			params:  map[string]any{"page": n}}
		if n == 2 {
			s.learnings = []string{"Each page lists one day's events; page 1 has no outage."}
		}
		if n == outagePage+1 {
			s.learnings = []string{fmt.Sprintf("Page %d records the outage: payments-api 503 for 23 minutes from 14:02, an expired TLS certificate.", outagePage)}
			s.evidence = []string{"payments-api answered 503 for 23 minutes", "an expired TLS certificate"}
		}
		if n > 1 { // the page read last
			s.evidence = append(s.evidence, fmt.Sprintf("page %d of %d", n-1, pageCount))
		}
		w.steps = append(w.steps, s)
		w.Calls = append(w.Calls, fmt.Sprintf("%s %d", RecordsAction, n))
	}
	w.summary = func(through int) string {
		if through < outagePage {
			return fmt.Sprintf("Pages 1-%d of the incident log read with records.page, each successfully; none records an outage "+
				"(each lists a billing-api deploy, queue depth, backups and disk usage).", through)
		}
		return fmt.Sprintf("Pages 1-%d of the incident log read with records.page, each successfully. Page %d records the outage: "+
			"payments-api answered 503 for 23 minutes from 14:02; cause: an expired TLS certificate. No other page records one.", through, outagePage)
	}
	answer := answerStep("Tell the user which page records the outage and its cause.", nil,
		fmt.Sprintf("All %d pages read. Only page %d records an outage: payments-api answered 503 for 23 minutes from 14:02; cause: an expired TLS certificate.", pageCount, outagePage),
		w.Answer)
	answer.evidence = []string{"payments-api answered 503 for 23 minutes", "an expired TLS certificate", fmt.Sprintf("page %d of %d", pageCount, pageCount)}
	w.steps = append(w.steps, answer)
	return w
}

// documentsWorkload extracts each upload in turn, then answers. facts[i]
// is what Stage 1 learns from upload i's extraction (its excerpt).
func documentsWorkload(name string, docs []workflow.DocumentContent, ask, answer string, facts []string) CostWorkload {
	w := CostWorkload{Name: name + ": extract each, then answer", Prompt: ask, Uploads: docs, Answer: answer}
	for i, d := range docs {
		s := costStep{action: "document.extract", objective: fmt.Sprintf("Extract the text of %s.", d.Name), docs: []int{i}}
		if i > 0 {
			s.learnings = []string{facts[i-1]}
			s.evidence = []string{facts[i-1]}
		}
		w.steps = append(w.steps, s)
		w.Calls = append(w.Calls, "document.extract "+d.Name)
	}
	last := answerStep("Answer the user's question from the three documents.", []string{facts[len(facts)-1]},
		strings.Join(facts, " "), answer)
	last.evidence = facts
	w.steps = append(w.steps, last)
	return w
}

const (
	reportsAsk      = "Read the three attached quarterly reports and tell me which region grew fastest and its main risk."
	reportsAnswer   = "West grew fastest: revenue up 14 % to 9.1 million EUR. Its main risk is the hiring freeze in the support team."
	contractsAsk    = "Read the three attached supply contracts and tell me which one has the longest notice period."
	contractsAnswer = "Contract B (Novaro GmbH and Dalgaard A/S) has the longest notice period: 6 months before the end of its 48-month term."
)

var reportFacts = []string{
	"North: revenue 12.4 million EUR, up 8 %; main risk the supplier delay on cooling units.",
	"South: revenue 10.2 million EUR, up 3 %; main risk the currency exposure in Turkey.",
	"West: revenue 9.1 million EUR, up 14 %; main risk the hiring freeze in the support team.",
}

var contractFacts = []string{
	"Contract A (Novaro GmbH and Fjell AS): 36-month term, notice 3 months before its end.",
	"Contract B (Novaro GmbH and Dalgaard A/S): 48-month term, notice 6 months before its end.",
	"Contract C (Novaro GmbH and Berg Oy): 24-month term, notice 90 days before its end.",
}

// reports returns the three quarterly reports, size bytes each.
func reports(size int) []workflow.DocumentContent {
	names := []string{"north.txt", "south.txt", "west.txt"}
	out := make([]workflow.DocumentContent, len(names))
	for i, n := range names {
		out[i] = textUpload(n, "Quarterly report, "+strings.TrimSuffix(n, ".txt")+" region. "+reportFacts[i]+"\n\n", size, "Region")
	}
	return out
}

// contracts returns the three supply contracts, size bytes each.
func contracts(size int) []workflow.DocumentContent {
	names := []string{"contract-a.txt", "contract-b.txt", "contract-c.txt"}
	out := make([]workflow.DocumentContent, len(names))
	for i, n := range names {
		out[i] = textUpload(n, "Supply contract. "+contractFacts[i]+"\n\n", size, "Clause")
	}
	return out
}

// textUpload is a plain-text upload of size bytes: head, then numbered
// paragraphs of ordinary business prose.
func textUpload(name, head string, size int, kind string) workflow.DocumentContent {
	var b strings.Builder
	b.WriteString(head)
	for i := 1; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s %d. The parties review deliveries, invoices and open issues every %d weeks; figures are "+
			"reported in EUR and rounded to the nearest thousand. Item %d of the plan moved by %d days after the "+
			"review of supplier capacity, and the owner confirmed the new date in writing.\n", kind, i, 2+i%3, i*7, i%11)
	}
	text := b.String()[:size]
	return workflow.DocumentContent{Document: workflow.Document{Name: name, MimeType: "text/plain", Size: int64(size)}, Content: []byte(text)}
}
