package placeholders

import "github.com/twostep/twostep/boundedcache"

// Bounds of a Cache's parts (each per generation: see boundedcache).
const (
	// maxCachedEntries bounds the rendered history entries, and the
	// positions that refer to them (each may keep an entry alive).
	maxCachedEntries = 4096
	// maxPositionedWorkflows bounds the workflows whose positions are kept.
	maxPositionedWorkflows = 1024
	// maxCachedStageTwo bounds the Stage 2 cuts (one per action and set
	// of fields Stage 1 asked for).
	maxCachedStageTwo = 1024
	// maxCachedMethods bounds the AVAILABLE_METHODS parameter summaries
	// (one per action name: a registry's size).
	maxCachedMethods = 4096
)

// Cache memoizes the placeholder factory for the value that renders with
// it (a prompt builder), which creates it with NewCache and owns it: each
// of its methods returns exactly what the package-level function of the
// same name returns, without redoing the costly part when its inputs are
// unchanged. It keeps
//
//   - each rendered history entry by message ID, a hit only when every
//     field the entry shows is unchanged, so History renders each committed
//     message once instead of on every step;
//   - per workflow, the entry of each message by its index (positions), so
//     a render finds the entries it showed on the previous step without a
//     lookup per message;
//   - each action's Stage 2 cut (StageTwoSchemaFields) by action name and
//     asked fields, checked against the action's schema bytes;
//   - each action's AVAILABLE_METHODS parameter summary by action name,
//     checked against its schema bytes.
//
// Every part is bounded (boundedcache). A Cache is safe for concurrent
// use. A nil *Cache memoizes nothing: its methods render every time.
type Cache struct {
	entries   *boundedcache.Cache[string, *cachedEntry]
	positions *boundedcache.Cache[string, *positions]
	stageTwo  *boundedcache.Cache[string, *stageTwoCut]
	methods   *boundedcache.Cache[string, paramSummary]
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{
		entries:   boundedcache.New[string, *cachedEntry](maxCachedEntries, 0),
		positions: boundedcache.New[string, *positions](maxPositionedWorkflows, maxCachedEntries),
		stageTwo:  boundedcache.New[string, *stageTwoCut](maxCachedStageTwo, 0),
		methods:   boundedcache.New[string, paramSummary](maxCachedMethods, 0),
	}
}
