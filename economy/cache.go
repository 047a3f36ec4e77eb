package economy

import "unicode/utf8"

// The prompt cache rule of the report and the bench (DESIGN §10.1): a
// request's leading tokens are served from the provider's cache when an
// earlier request of the same workflow and stage sent them, counted in
// whole blocks of CacheBlock tokens, and only for prompts of at least
// CacheMinPrompt tokens (OpenAI's published rule; Anthropic's is alike once
// cache_control marks the prefix).
const (
	CacheMinPrompt = 1024
	CacheBlock     = 128
)

// CachedPrefix applies the cache rule to a prompt of promptTokens whose
// first sharedTokens tokens an earlier request of the same workflow and
// stage sent: the tokens the cache serves.
func CachedPrefix(promptTokens, sharedTokens int) int {
	if promptTokens < CacheMinPrompt {
		return 0
	}
	return min(sharedTokens, promptTokens) / CacheBlock * CacheBlock
}

// maxCompared bounds how many earlier requests a PrefixCache compares a new
// one with (the most recent): the longest shared prefix is almost always
// with one of the last few, and it keeps a long workflow's report linear.
const maxCompared = 32

// PrefixCache models a provider's prompt cache over the requests of one
// workflow and stage, in the order they were sent. It is not safe for
// concurrent use.
type PrefixCache struct {
	count func(string) int
	seen  []sent
}

// sent is a request the cache has seen and its tokens.
type sent struct {
	text   string
	tokens int
}

// NewPrefixCache returns an empty cache that counts tokens with count.
func NewPrefixCache(count func(string) int) *PrefixCache {
	return &PrefixCache{count: count}
}

// Serve returns how many of a request's promptTokens the cache serves (the
// longest prefix of text an earlier request sent, under CachedPrefix) and
// remembers the request. text is everything the request sent, in the order
// the provider reads it; the shared prefix is counted with the cache's
// counter (an earlier request sent whole counts as its own promptTokens).
func (c *PrefixCache) Serve(text string, promptTokens int) int {
	shared := 0
	for _, s := range c.seen[max(0, len(c.seen)-maxCompared):] {
		n := commonPrefix(s.text, text)
		switch {
		case n == len(s.text):
			shared = max(shared, s.tokens)
		case n > 0:
			shared = max(shared, c.count(text[:n]))
		}
	}
	c.seen = append(c.seen, sent{text, promptTokens})
	return CachedPrefix(promptTokens, shared)
}

// commonPrefix returns the length in bytes of the longest common prefix of
// a and b, cut back to the start of a UTF-8 sequence.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && a[i:i+8] == b[i:i+8] {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) { // one is a prefix of the other: a whole string ends at i
		return i
	}
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
