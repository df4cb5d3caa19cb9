package conf

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// dayUnits are the units plugin arguments accept on top of time.ParseDuration's, because
// minimum runtimes are naturally written in days and weeks.
var dayUnits = map[string]int64{
	"d": int64(24 * time.Hour),
	"w": int64(7 * 24 * time.Hour),
}

// goUnits are the units time.ParseDuration accepts (both spellings of micro: U+00B5, U+03BC).
var goUnits = []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"}

const unitsHint = "units: ns, us, ms, s, m, h, d, w"

// ParseDuration parses what time.ParseDuration parses, such as "90s" or "-1h30m", plus the
// units d (24h) and w (7d), in any combination: "1w2d3h", "1.5d". Without d or w terms the
// result is exactly time.ParseDuration's.
func ParseDuration(s string) (time.Duration, error) {
	fail := func(format string, args ...any) (time.Duration, error) {
		return 0, fmt.Errorf("invalid duration %q: %s", s, fmt.Sprintf(format, args...))
	}
	rest, sign := s, ""
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		sign, rest = rest[:1], rest[1:]
	}
	if rest == "0" { // like time.ParseDuration, a bare zero needs no unit
		return 0, nil
	}
	if s == "" {
		return fail("empty")
	}
	if rest == "" {
		return fail("expected a number after the sign")
	}

	// Terms in Go's units are handed to time.ParseDuration together, so their rounding and
	// range match it exactly; day and week terms are computed here without rounding.
	var goTerms strings.Builder
	days := new(big.Int)
	for rest != "" {
		whole, frac, unit, tail := splitTerm(rest)
		switch {
		case whole == "" && frac == "":
			return fail("expected a number at %q", rest)
		case unit == "":
			return fail("missing unit after %q (%s)", rest[:len(rest)-len(tail)], unitsHint)
		case dayUnits[unit] != 0:
			days.Add(days, scaleTerm(whole, frac, dayUnits[unit]))
		case slices.Contains(goUnits, unit):
			goTerms.WriteString(rest[:len(rest)-len(tail)])
		default:
			return fail("unknown unit %q (%s)", unit, unitsHint)
		}
		rest = tail
	}

	total := new(big.Int)
	if goTerms.Len() > 0 {
		// Every term is well-formed by now, so the only possible failure is overflow.
		d, err := time.ParseDuration(sign + goTerms.String())
		if err != nil {
			return fail("out of range (at most about 292 years)")
		}
		total.SetInt64(int64(d))
	}
	if sign == "-" {
		days.Neg(days)
	}
	total.Add(total, days)
	if !total.IsInt64() {
		return fail("out of range (at most about 292 years)")
	}
	return time.Duration(total.Int64()), nil
}

// splitTerm splits the leading "<whole>.<frac><unit>" term off s, the way time.ParseDuration
// reads it: the unit is everything up to the next digit or dot.
func splitTerm(s string) (whole, frac, unit, tail string) {
	i := digitsEnd(s, 0)
	whole = s[:i]
	if i < len(s) && s[i] == '.' {
		j := digitsEnd(s, i+1)
		frac, i = s[i+1:j], j
	}
	j := i
	for j < len(s) && s[j] != '.' && (s[j] < '0' || s[j] > '9') {
		j++
	}
	return whole, frac, s[i:j], s[j:]
}

func digitsEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// scaleTerm returns whole.frac * unit nanoseconds, truncated like time.ParseDuration truncates
// fractions of a nanosecond. Big integers make overflow a single range check at the end.
func scaleTerm(whole, frac string, unit int64) *big.Int {
	digits, _ := new(big.Int).SetString("0"+whole+frac, 10)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	digits.Mul(digits, big.NewInt(unit))
	return digits.Quo(digits, scale)
}

// ParseNonNegativeDuration parses a plugin argument that holds a duration which may not be
// negative, such as a minimum runtime. Errors name the argument and its value.
func ParseNonNegativeDuration(key, value string) (time.Duration, error) {
	d, err := ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: must not be negative, got %q", key, value)
	}
	return d, nil
}
