package report

import (
	"reflect"
	"testing"
)

func TestRepeatedEvictionsAreWarnedOncePerPair(t *testing.T) {
	evict := func(at float64, victim, pod, preemptor string) Event {
		return Event{Time: at, Type: EventEvict, PodGroup: victim, Pod: pod, Preemptor: preemptor}
	}
	var events []Event
	for i := range 4 { // four times for the same preemptor: thrash
		events = append(events, evict(float64(10*i), "ns/looped", "looped-0", "ns/p"))
	}
	for i := range 5 { // one gang of five pods evicted at once: one eviction
		events = append(events, evict(3, "ns/gang", "gang-"+string(rune('0'+i)), "ns/p"))
	}
	for i := range 3 { // three times is within the bound
		events = append(events, evict(float64(100+i), "ns/thrice", "thrice-0", "ns/q"))
	}
	got := RepeatedEvictions(events)
	want := []string{"job ns/looped was evicted 4 times for job ns/p (first at 0:00:00, last at 0:00:30): " +
		"the resources freed for the preemptor did not reach it"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	if clean := RepeatedEvictions(nil); clean == nil || len(clean) != 0 {
		t.Fatalf("no evictions must give an empty list, not %#v: the JSON contract has an array", clean)
	}
}
