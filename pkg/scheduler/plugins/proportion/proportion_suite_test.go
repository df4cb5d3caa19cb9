package proportion_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestProportionScenarios(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "proportion (fair share) scenarios")
}

var ctx = context.Background()
