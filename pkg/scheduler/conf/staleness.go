package conf

import (
	"encoding/json"
	"time"
)

// StalenessKey is the top-level key of the default staleness grace period. Upstream
// KAI-Scheduler keeps globalDefaultStalenessGracePeriod among its scheduler parameters (set by
// its operator per shard); here every setting of a shard lives in its configuration file, so
// the key sits next to actions and tiers, under upstream's name.
const StalenessKey = "globalDefaultStalenessGracePeriod"

// DefaultStalenessGracePeriod is upstream's default: a gang below its minimum for a minute is
// evicted.
const DefaultStalenessGracePeriod = 60 * time.Second

// stalenessGracePeriod reads the key: a duration string as ParseDuration takes it, negative
// allowed (it turns staleness eviction off for jobs that set no period of their own).
func (l *loader) stalenessGracePeriod(raw json.RawMessage) time.Duration {
	if absent(raw) {
		return DefaultStalenessGracePeriod
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		l.errorf("%s: must be a duration string such as \"60s\", got %s", StalenessKey, Describe(raw))
		return 0
	}
	d, err := ParseDuration(s)
	if err != nil {
		l.errorf("%s: %v", StalenessKey, err)
		return 0
	}
	return d
}
