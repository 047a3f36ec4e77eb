package workflow

import "github.com/twostep/twostep/templates/notices"

// Bounds of the maxTokens a retry after a cut reply asks for.
const (
	// MinRetryMaxTokens is the least a retry after a cut reply asks for.
	MinRetryMaxTokens = 1024
	// MaxRetryMaxTokens caps it below what current models accept.
	MaxRetryMaxTokens = 16384
)

// TruncatedProblem is the rejection (and VALIDATION_FEEDBACK line) of a
// reply the provider stopped at the token limit: it names the cause — the
// provider's stop reason and the tokens the reply reached — and is the
// only thing said about the reply, which is never parsed.
func TruncatedProblem(resp ModelResponse) string {
	return notices.Truncated(resp.StopReason, resp.CompletionTokens)
}

// RetryMaxTokens returns the maxTokens for the retry of a call sent with
// sent (0: the provider's default) whose reply resp was cut at the limit:
// twice the limit it ran into (sent, or the tokens it reached when none was
// sent), at least MinRetryMaxTokens and at most MaxRetryMaxTokens.
func RetryMaxTokens(sent int, resp ModelResponse) int {
	limit := sent
	if limit <= 0 {
		limit = resp.CompletionTokens
	}
	return min(max(2*limit, MinRetryMaxTokens), MaxRetryMaxTokens)
}
