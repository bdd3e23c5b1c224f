package budget_test

import (
	"encoding/json"
	"fmt"

	"github.com/ctxfit/ctxfit/budget"
)

func ExampleExact() {
	c, err := budget.Exact("o200k_base")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Count("Nothing over budget, nothing lost."))
	// Output: 7
}

func ExampleBudget_Usage() {
	b := budget.Default()
	u, _ := json.Marshal(b.Usage(5000))
	fmt.Println(string(u))
	// Output: {"estimatedTokens":5000,"threshold":4000,"hardCap":12000,"budgetUsed":1,"budgetRemaining":0,"summaryMode":true,"overHardCap":false}
}

func ExampleExceeds() {
	c, _ := budget.Exact("")
	fmt.Println(budget.Exceeds(c, "a short answer", 4000))
	// Output: false
}

func ExampleEstimator() {
	fmt.Println(budget.Estimator{}.Count("one token per four bytes, plus 20%"))
	// Output: 11
}
