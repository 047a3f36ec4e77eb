package bench

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The workloads of issue 46 that forgetting fails: recall (every earlier
// result is needed at the end) and many files (every upload is needed by
// its own reference, long after the index first listed it).

// invoiceCount is the number of the recall workload's invoices.
const invoiceCount = 10

// invoiceSuppliers name the recall workload's invoices' suppliers.
var invoiceSuppliers = []string{"Aalto Metals", "Brandt Logistics", "Costa Foods", "Dunmore Print", "Eklund Energy",
	"Faro Textiles", "Gruber Tools", "Halden Paper", "Iversen Glass", "Jansen Chemicals"}

// invoiceAmount is invoice n's amount due in cents.
func invoiceAmount(n int) int { return 100_000 + n*37_513 + (n%3)*9_905 }

// euros writes cents as "1,234.56".
func euros(cents int) string {
	whole := thousands(cents / 100)
	return fmt.Sprintf("%s.%02d", whole, cents%100)
}

// invoiceHead is the first line of invoice n: the fact the answer needs.
func invoiceHead(n int) string {
	return fmt.Sprintf("Invoice %d of %d from %s. Amount due: %s EUR.", n, invoiceCount, invoiceSuppliers[n-1], euros(invoiceAmount(n)))
}

// invoiceFact reads an invoice's head out of a text: its number, supplier
// and amount.
var invoiceFact = regexp.MustCompile(`Invoice (\d+) of 10 from ([A-Za-z ]+)\. Amount due: ([\d,]+\.\d\d) EUR\.`)

// recallAnswer is the answer that lists every invoice's amount and their
// total, from the invoices found in text (number → supplier and amount).
func recallAnswer(found map[int][2]string) (context, message string) {
	var lines []string
	total := 0
	for n := 1; n <= invoiceCount; n++ {
		f, ok := found[n]
		if !ok {
			continue
		}
		lines = append(lines, fmt.Sprintf("invoice %d (%s) %s EUR", n, f[0], f[1]))
		cents, _ := strconv.Atoi(strings.NewReplacer(",", "", ".", "").Replace(f[1]))
		total += cents
	}
	context = "Amounts due read from the extracted invoices: " + strings.Join(lines, "; ") + "."
	message = fmt.Sprintf("The %d invoices: %s. Total due: %s EUR.", len(lines), strings.Join(lines, "; "), euros(total))
	return context, message
}

func recallWorkload() CostWorkload {
	w := CostWorkload{Name: "recall: 10 invoices read one by one, then answer",
		Prompt: "Read the ten attached invoices one at a time, then tell me the amount due on each and the total."}
	truth := map[int][2]string{}
	for n := 1; n <= invoiceCount; n++ {
		name := fmt.Sprintf("invoice-%02d.txt", n)
		w.Uploads = append(w.Uploads, textUpload(name, invoiceHead(n)+"\n\n", 600, "Line"))
		truth[n] = [2]string{invoiceSuppliers[n-1], euros(invoiceAmount(n))}
		w.steps = append(w.steps, costStep{action: "document.extract", objective: fmt.Sprintf("Extract the text of %s.", name), docs: []int{n - 1}})
		w.Calls = append(w.Calls, "document.extract "+name)
	}
	_, w.Answer = recallAnswer(truth)
	answer := answerStep("Tell the user each invoice's amount due and the total.", nil, "", "")
	answer.answer = func(prompt string) (string, string, int, int) {
		found := map[int][2]string{}
		for _, m := range invoiceFact.FindAllStringSubmatch(prompt, -1) {
			n, _ := strconv.Atoi(m[1])
			found[n] = [2]string{m[2], m[3]}
		}
		context, message := recallAnswer(found)
		return context, message, len(found), invoiceCount
	}
	// Stage 1 adds up the amounts it read and hands Stage 2 the total, as
	// a capable model does: every figure of the answer is in the context.
	answer.derive = func(context string) string {
		total := 0
		for _, m := range amountIn.FindAllStringSubmatch(context, -1) {
			cents, _ := strconv.Atoi(strings.NewReplacer(",", "", ".", "").Replace(m[1]))
			total += cents
		}
		return fmt.Sprintf(" Their total: %s EUR.", euros(total))
	}
	w.steps = append(w.steps, answer)
	return w
}

// amountIn finds the amounts of the recall answer's context.
var amountIn = regexp.MustCompile(`\) ([\d,]+\.\d\d) EUR`)

// formCount is the number of the many-files workload's uploads.
const formCount = 12

func manyFilesWorkload() CostWorkload {
	w := CostWorkload{Name: "many files: 12 uploads, each extracted by its docItem, then answer",
		Prompt: "Extract the text of each of the twelve attached forms, one form per step, then tell me which forms you extracted.",
		Answer: "All twelve forms are extracted: form-01.txt to form-12.txt, one text document each."}
	var evidence []string
	for n := 1; n <= formCount; n++ {
		name := fmt.Sprintf("form-%02d.txt", n)
		w.Uploads = append(w.Uploads, textUpload(name, fmt.Sprintf("Registration form %d of %d.\n\n", n, formCount), 1500, "Field"))
		w.steps = append(w.steps, costStep{action: "document.extract", objective: fmt.Sprintf("Extract the text of %s.", name), docs: []int{n - 1}})
		w.Calls = append(w.Calls, "document.extract "+name)
		evidence = append(evidence, name+" from "+name)
	}
	answer := answerStep("Tell the user which forms were extracted.", nil,
		"Each of the twelve forms (form-01.txt to form-12.txt) was extracted into its own text document.", w.Answer)
	answer.evidence = evidence
	w.steps = append(w.steps, answer)
	return w
}
