# Included by every package Makefile: render, diff and apply the chart.
.DEFAULT_GOAL=help
.PHONY=help show diff apply delete

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  %-20s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

show: ## Show output of rendered templates
	helm template -n $(NAMESPACE) $(NAME) .

diff: ## Diff Helm release against objects in a Kubernetes cluster
	helm template -n $(NAMESPACE) $(NAME) . | kubectl diff -n $(NAMESPACE) -f-

apply: ## Apply Helm release to a Kubernetes cluster
	helm template -n $(NAMESPACE) $(NAME) . | kubectl apply -n $(NAMESPACE) -f-

delete: ## Delete Helm release from a Kubernetes cluster
	helm template -n $(NAMESPACE) $(NAME) . | kubectl delete -n $(NAMESPACE) -f-
