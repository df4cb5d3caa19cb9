package scheduling

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseEscalationFactor reads an escalation factor, the minruntime plugin's escalationFactor
// argument or a Queue's escalation-factor annotation (key names which, for the error): a
// finite number of at least 1, 1 being off.
func ParseEscalationFactor(key, value string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
		return 0, fmt.Errorf("%s: must be a number of at least 1 (1 is off), got %q", key, value)
	}
	return f, nil
}
