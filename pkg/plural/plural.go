package plural

import "strconv"

// Count is n and its noun, in the singular for one: "1 eviction", "0 evictions", "2
// evictions". The plural is given, not derived, as English makes "leaves" of "leaf".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
