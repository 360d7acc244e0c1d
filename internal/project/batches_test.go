package project

import (
	"slices"
	"testing"
)

// TestBatches: a batch is what has arrived, up to the size: values queued
// together are batched together, a lone value is its own batch, and
// nothing is lost or reordered when the channel closes mid-batch.
func TestBatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		queued []int
		size   int
		want   [][]int
	}{
		{"fills up to the size", []int{1, 2, 3, 4, 5}, 2, [][]int{{1, 2}, {3, 4}, {5}}},
		{"all that arrived", []int{1, 2, 3}, 1024, [][]int{{1, 2, 3}}},
		{"a lone value", []int{7}, 1024, [][]int{{7}}},
		{"nothing", nil, 4, nil},
	} {
		in := make(chan int, len(c.queued))
		for _, v := range c.queued {
			in <- v
		}
		close(in)
		var got [][]int
		for b := range Batches(in, c.size) {
			got = append(got, b)
		}
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: batches %v, want %v", c.name, got, c.want)
		}
	}
	// A batch does not wait for more than what has arrived.
	in := make(chan int, 4)
	in <- 1
	for b := range Batches(in, 4) {
		if !slices.Equal(b, []int{1}) {
			t.Fatalf("first batch %v, want [1]", b)
		}
		break
	}
}
