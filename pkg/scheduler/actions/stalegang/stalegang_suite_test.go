package stalegang_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestStaleGang(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "stalegangeviction action scenarios")
}
