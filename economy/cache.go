package economy

import "github.com/twostep/twostep/textclip"

// The prompt cache rule of the report and the bench (DESIGN §10.1): a
// request's leading tokens are served from the provider's cache when an
// earlier request of the same workflow and stage sent them, counted in
// whole blocks of CacheBlock tokens, and only when that shared prefix is
// at least CacheMinPrompt tokens (OpenAI's published rule: a hit is 1,024
// tokens or more, then in steps of 128; Anthropic's is alike once
// cache_control marks the prefix, whose cached part must be 1,024 tokens
// or more).
const (
	CacheMinPrompt = 1024
	CacheBlock     = 128
)

// CachedPrefix applies the cache rule to a prompt of promptTokens whose
// first sharedTokens tokens an earlier request of the same workflow and
// stage sent: the tokens the cache serves.
func CachedPrefix(promptTokens, sharedTokens int) int {
	if promptTokens < CacheMinPrompt || min(sharedTokens, promptTokens) < CacheMinPrompt {
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
// the provider reads it; the shared prefix is counted once with the
// cache's counter, or, when it is the whole of an earlier request (an
// append-only transcript), as that request's promptTokens.
func (c *PrefixCache) Serve(text string, promptTokens int) int {
	best, whole := 0, -1 // the longest shared prefix; the tokens of the request it is all of, or -1
	for i := len(c.seen) - 1; i >= max(0, len(c.seen)-maxCompared); i-- {
		s := c.seen[i]
		if len(s.text) <= best {
			continue // cannot share more than the best so far
		}
		if n := commonPrefix(s.text, text); n > best {
			best, whole = n, -1
			if n == len(s.text) {
				whole = s.tokens
			}
		}
	}
	c.seen = append(c.seen, sent{text, promptTokens})
	switch {
	case best == 0:
		return 0
	case whole >= 0:
		return CachedPrefix(promptTokens, whole)
	}
	return CachedPrefix(promptTokens, c.count(text[:best]))
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
	return len(textclip.Cut(b, i))
}
