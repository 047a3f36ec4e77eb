package economy

// Price is what a model charges, in US dollars per million tokens: Input
// for prompt tokens the cache did not serve, CachedInput for those it did,
// Output for completion tokens.
type Price struct {
	Input, CachedInput, Output float64
}

// Prices maps "<provider>/<model>" (a trace's model) to its price. There
// are no built-in prices: a model without an entry has no money figures.
type Prices map[string]Price

// Tokens is the usage of one or more model calls: Input is every prompt
// token, Cached the part of Input the provider's cache served, Output the
// completion tokens.
type Tokens struct {
	Input  int
	Cached int
	Output int
}

// Add returns t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{Input: t.Input + u.Input, Cached: t.Cached + u.Cached, Output: t.Output + u.Output}
}

// USD is what usage t costs at price p.
func (p Price) USD(t Tokens) float64 {
	return (float64(t.Input-t.Cached)*p.Input + float64(t.Cached)*p.CachedInput + float64(t.Output)*p.Output) / 1e6
}

// Weights of EquivalentTokens: a cached prompt token costs a tenth of an
// uncached one, an output token five times one (the usual ratios of
// today's price lists).
const (
	CachedWeight = 0.1
	OutputWeight = 5
)

// EquivalentTokens weighs usage t as uncached input tokens: the cost
// measure of a report without prices (uncached + 0.1 × cached + 5 ×
// output).
func EquivalentTokens(t Tokens) float64 {
	return float64(t.Input-t.Cached) + CachedWeight*float64(t.Cached) + OutputWeight*float64(t.Output)
}
