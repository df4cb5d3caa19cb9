package conf

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	const day, week = 24 * time.Hour, 7 * 24 * time.Hour
	valid := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"-0", 0},
		{"0s", 0},
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"500ms", 500 * time.Millisecond},
		{"1.5h", 90 * time.Minute},
		{".5s", 500 * time.Millisecond},
		{"1d", day},
		{"1w", week},
		{"1w2d3h", week + 2*day + 3*time.Hour},
		{"3h1w", week + 3*time.Hour},
		{"1.5d", 36 * time.Hour},
		{"0.5w", 84 * time.Hour},
		{"+2d", 2 * day},
		{"-5m", -5 * time.Minute},
		{"-1d", -day},
		{"-1d12h", -36 * time.Hour},
		{"106751d", 106751 * day}, // the largest whole number of days that fits
		{"-9223372036854775808ns", time.Duration(-1 << 63)},
	}
	for _, tc := range valid {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}

	invalid := []struct{ in, reason string }{
		{"", "empty"},
		{"-", "expected a number after the sign"},
		{"abc", `expected a number at "abc"`},
		{"5", `missing unit after "5"`},
		{"1h5", `missing unit after "5"`},
		{"1x", `unknown unit "x"`},
		{"1 d", `unknown unit " d"`},
		{"1d-5m", `unknown unit "d-"`},
		{"999999999999d", "out of range"},
		{"106752d", "out of range"},
		{"2562048h", "out of range"},
		{"106751d1w", "out of range"},
	}
	for _, tc := range invalid {
		t.Run("invalid "+tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error", tc.in, got)
			}
			for _, want := range []string{`invalid duration "` + tc.in + `"`, tc.reason} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// FuzzParseDuration checks the promise that, without d and w terms, ParseDuration behaves
// exactly like time.ParseDuration. `go test` runs the seeds; `go test -fuzz` explores further.
func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{"0", "-0", "+0", "", "1h30m", "1.5h", ".5s", "5.s", "1.0000000001h",
		"9223372036854775807ns", "-9223372036854775808ns", "9223372036854775808ns", "2562047h47m16.854775807s",
		"1µs", "1μs", "1us", "abc", "1", "1hh", ".s", "-", "1h-1m", "0x1s"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "dw") {
			return
		}
		got, err := ParseDuration(s)
		want, wantErr := time.ParseDuration(s)
		if (err == nil) != (wantErr == nil) || got != want {
			t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration = %v, %v", s, got, err, want, wantErr)
		}
	})
}

func TestParseNonNegativeDuration(t *testing.T) {
	got, err := ParseNonNegativeDuration("defaultReclaimMinRuntime", "1d")
	if err != nil || got != 24*time.Hour {
		t.Fatalf("got %v, %v; want 24h", got, err)
	}
	if got, err := ParseNonNegativeDuration("defaultReclaimMinRuntime", "0"); err != nil || got != 0 {
		t.Fatalf("got %v, %v; want 0", got, err)
	}

	errors := []struct{ value, want string }{
		{"abc", `defaultReclaimMinRuntime: invalid duration "abc": `},
		{"", `defaultReclaimMinRuntime: invalid duration "": empty`},
		{"-5m", `defaultReclaimMinRuntime: must not be negative, got "-5m"`},
		{"-1d", `defaultReclaimMinRuntime: must not be negative, got "-1d"`},
	}
	for _, tc := range errors {
		t.Run(tc.value, func(t *testing.T) {
			_, err := ParseNonNegativeDuration("defaultReclaimMinRuntime", tc.value)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to start with %q", err, tc.want)
			}
		})
	}
}
