package scheduling

import "testing"

func TestNodePoolIncludes(t *testing.T) {
	labelled := map[string]string{NodePoolLabel: "a100"}
	other := map[string]string{NodePoolLabel: "h100"}
	blank := map[string]string{NodePoolLabel: ""}
	for _, tt := range []struct {
		pool   NodePool
		labels map[string]string
		want   bool
	}{
		{NodePool{NodePoolLabel, "a100"}, labelled, true},
		{NodePool{NodePoolLabel, "a100"}, other, false},
		{NodePool{NodePoolLabel, "a100"}, nil, false},
		{NodePool{NodePoolLabel, ""}, nil, true},
		{NodePool{NodePoolLabel, ""}, blank, true},
		{NodePool{NodePoolLabel, ""}, labelled, false},
		{NodePool{"", ""}, labelled, true},
		{NodePool{"example.com/pool", "a100"}, labelled, false},
	} {
		if got := tt.pool.Includes(tt.labels); got != tt.want {
			t.Errorf("%+v.Includes(%v) = %v, want %v", tt.pool, tt.labels, got, tt.want)
		}
	}
}
