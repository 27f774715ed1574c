package gentree

// MeasuredMonorepo is where the monorepo shape's other charts come from.
const MeasuredMonorepo = "github.com/cozystack/cozystack packages/ at commit 3c780acd"

// measuredChart is one of the charts of Cozystack's packages/ that is not
// a provider package: its ChartStats, and how `verifier check`'s loader
// took it (ChartPath).
type measuredChart struct {
	path    string
	took    Took
	child   string // why it rendered in a render child (WhyKind), "" if it did not
	failure string // failureKind of a failing chart
	// files, bytes: regular files of the chart, subcharts included;
	// values, schema: values.yaml and values.schema.json; templates,
	// templateBytes, uses: the chart's own templates/.
	files, bytes, values, schema, templates, templateBytes int
	uses                                                   Construct
	// Everything under charts/: subcharts (Chart.yaml files), files,
	// bytes, templates and their bytes, what they use.
	subcharts, subFiles, subBytes, subTemplates, subTemplateBytes int
	subUses                                                       Construct
	crdFiles, crdBytes                                            int // under a crds/ folder, not templates
	actions, subActions                                           int // {{ … }} in its templates, its subcharts'
	// certs and hashes are the distinct certificates and the bcrypt
	// hashes its render with default values printed (loadpath.Secrets):
	// each certificate cost an RSA key, the cost of a few real charts.
	certs, hashes int
}

// MeasuredPaths are how the verifier's loader took the charts of
// MeasuredMonorepo that are not provider packages, by slash path under
// packages/ (Why is the WhyKind of a chart rendered in a child).
func MeasuredPaths() map[string]ChartPath {
	out := make(map[string]ChartPath, len(measuredOthers))
	for _, m := range measuredOthers {
		out[m.path] = ChartPath{Took: m.took, Child: m.child != "", Why: m.child, Failure: m.failure}
	}
	return out
}

// MeasuredSecrets are the certificates and bcrypt hashes the renders of
// MeasuredMonorepo's charts made (loadpath.Secrets), by path, where any.
func MeasuredSecrets() map[string][2]int {
	out := map[string][2]int{}
	for _, m := range measuredOthers {
		if m.certs+m.hashes > 0 {
			out[m.path] = [2]int{m.certs, m.hashes}
		}
	}
	return out
}

// measuredOthers are the 160 charts of MeasuredMonorepo that are not
// provider packages, measured by MeasureCharts, loadpath.Charts and
// loadpath.Secrets (`go run ./internal/testkit/gentree/cmd/measurecharts
// -root COZYSTACK/packages` prints these rows; the verifier's loader of
// the commit that measured them took them so: 48 settled from their
// templates (render.Inert), 112 rendered, 111 of them in a render child
// (50 for their subcharts, 34 values schemas, 4 templates over the fast
// path's caps, 23 constructs the proof does not admit), 45 failing and 1
// empty with default values). When a change to the loader moves a chart
// to another path, loadpath's test names it: measure the checkout again.
//
//	path, took, child (why), failure, files, bytes, values, schema, templates, templateBytes, uses,
//	subcharts, subFiles, subBytes, subTemplates, subTemplateBytes, subUses, crdFiles, crdBytes, actions, subActions, certs, hashes
var measuredOthers = []measuredChart{
	{"apps/bucket", TookFailing, "schema", "nil", 12, 20732, 471, 815, 5, 9838, UsesInclude | UsesRange | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 65, 0, 0, 0},
	{"apps/clickhouse", TookFailing, "schema", "fail", 25, 102049, 8854, 12741, 11, 38181, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 267, 0, 0, 0},
	{"apps/foundationdb", TookFailing, "schema", "index", 15, 43283, 6071, 9362, 8, 9470, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 112, 0, 0, 0},
	{"apps/harbor", TookFailing, "schema", "nil", 16, 76008, 4067, 13903, 6, 27061, UsesInclude | UsesRange | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 195, 0, 0, 0},
	{"apps/http-cache", TookFailing, "schema", "fail", 18, 45623, 2876, 7095, 8, 18068, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 118, 0, 0, 0},
	{"apps/kafka", TookFailing, "schema", "fail", 20, 60195, 4375, 9751, 8, 18061, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 92, 0, 0, 0},
	{"apps/kubernetes", TookFailing, "schema", "index", 105, 803020, 29040, 49629, 44, 229017, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 1429, 0, 0, 0},
	{"apps/kubernetes-nodes", TookFailing, "schema", "required", 24, 216020, 16087, 19649, 7, 69406, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 609, 0, 0, 0},
	{"apps/mariadb", TookFailing, "schema", "fail", 32, 77109, 4809, 6953, 16, 28939, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 213, 0, 0, 0},
	{"apps/mongodb", TookFailing, "schema", "index", 25, 88501, 5453, 9504, 9, 12883, UsesInclude | UsesDefine | UsesRange | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 193, 0, 0, 0},
	{"apps/nats", TookFailing, "schema", "index", 15, 39823, 3043, 5074, 6, 9163, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 131, 0, 0, 0},
	{"apps/openbao", TookFailing, "schema", "fail", 12, 17306, 2212, 3654, 4, 6091, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 47, 0, 0, 0},
	{"apps/opensearch", TookFailing, "schema", "index", 20, 55399, 4273, 8636, 7, 10396, UsesInclude | UsesDefine | UsesRange | UsesLookup | UsesFiles | UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 137, 0, 0, 0},
	{"apps/postgres", TookFailing, "schema", "fail", 29, 146349, 13933, 14492, 14, 37721, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 320, 0, 0, 0},
	{"apps/qdrant", TookFailing, "schema", "fail", 15, 54488, 2413, 3902, 5, 13448, UsesInclude | UsesDefine | UsesRange | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 109, 0, 0, 0},
	{"apps/rabbitmq", TookFailing, "schema", "fail", 14, 24336, 3047, 4812, 5, 6237, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 90, 0, 0, 0},
	{"apps/redis", TookFailing, "schema", "fail", 15, 27725, 2208, 3689, 6, 8590, UsesInclude | UsesDefine | UsesToYaml | UsesLookup | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 91, 0, 0, 0},
	{"apps/tcp-balancer", TookFailing, "schema", "fail", 12, 31994, 2678, 4140, 5, 8483, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 112, 0, 0, 0},
	{"apps/tenant", TookFailing, "schema", "fail", 31, 101178, 1795, 2618, 14, 49541, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 281, 0, 0, 0},
	{"apps/vm-disk", TookFailing, "schema", "fail", 13, 15978, 1262, 2401, 5, 5483, UsesInclude | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 65, 0, 0, 0},
	{"apps/vm-instance", TookFailing, "schema", "fail", 15, 48922, 3774, 5688, 6, 18353, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 289, 0, 0, 0},
	{"apps/vpc", TookFailing, "schema", "fail", 7, 10591, 1050, 1647, 1, 4191, UsesInclude | UsesRange | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 76, 0, 0, 0},
	{"apps/vpn", TookFailing, "schema", "nil", 16, 23783, 2311, 3354, 9, 10647, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 130, 0, 0, 0},
	{"core/flux-aio", TookSettled, "", "", 3, 2832, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"core/installer", TookRendered, "proof", "", 12, 35738, 4104, 0, 3, 19433, UsesRequired | UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 55, 0, 0, 0},
	{"core/platform", TookFailing, "proof", "fail", 214, 525555, 37193, 0, 14, 61544, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 556, 0, 0, 0},
	{"core/talos", TookSettled, "", "", 14, 16448, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"core/testing", TookSettled, "", "", 5, 8446, 133, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"extra/bootbox", TookFailing, "schema", "nil", 16, 23641, 1271, 2343, 7, 6338, UsesInclude | UsesRange | UsesToYaml | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 62, 0, 0, 0},
	{"extra/computeplane", TookRendered, "schema", "", 11, 46763, 3255, 6294, 2, 5037, UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 19, 0, 0, 0},
	{"extra/etcd", TookFailing, "schema", "fail", 22, 52722, 729, 2018, 9, 26111, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 177, 0, 0, 0},
	{"extra/external-dns", TookFailing, "schema", "required", 9, 23099, 3811, 5869, 2, 6505, UsesInclude | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 109, 0, 0, 0},
	{"extra/gateway", TookFailing, "schema", "index", 11, 47864, 608, 800, 2, 8074, UsesRange | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 91, 0, 0, 0},
	{"extra/info", TookFailing, "schema", "index", 10, 4325, 3, 70, 3, 2458, UsesInclude | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 33, 0, 0, 0},
	{"extra/ingress", TookFailing, "schema", "index", 20, 44137, 2585, 3483, 7, 13770, UsesInclude | UsesDefine | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 91, 0, 0, 0},
	{"extra/monitoring", TookFailing, "schema", "fail", 13, 76457, 9559, 24439, 5, 12061, UsesInclude | UsesRange | UsesToYaml | UsesRequired | UsesFail, 0, 0, 0, 0, 0, 0, 0, 0, 74, 0, 0, 0},
	{"extra/seaweedfs", TookFailing, "schema", "nil", 28, 161729, 6923, 28440, 12, 49951, UsesInclude | UsesDefine | UsesRange | UsesTpl | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 461, 0, 0, 0},
	{"library/cozy-lib", TookRendered, "schema", "", 15, 31024, 3, 75, 9, 30200, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 369, 0, 0, 0},
	{"system/application-definition-crd", TookSettled, "", "", 5, 40038, 3, 0, 1, 75, UsesFiles, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
	{"system/backup-controller", TookRendered, "proof", "", 17, 54105, 346, 0, 6, 3993, UsesRange | UsesToYaml | UsesFiles | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0},
	{"system/backupstrategy-controller", TookRendered, "proof", "", 34, 2180808, 10828, 0, 17, 44367, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 189, 0, 0, 0},
	{"system/bootbox", TookRendered, "subcharts", "", 15, 36934, 89, 0, 1, 518, 0, 1, 11, 35602, 7, 11192, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesRequired | UsesWith | UsesVariable, 1, 16330, 0, 181, 0, 0},
	{"system/bootbox-rd", TookSettled, "", "", 5, 13556, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/bucket", TookFailing, "proof", "nil", 15, 35629, 34, 0, 6, 6655, UsesRange | UsesLookup | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 65, 0, 0, 0},
	{"system/bucket-rd", TookSettled, "", "", 5, 4198, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/capi-operator", TookEmpty, "subcharts", "", 19, 2017557, 158, 0, 0, 0, 0, 1, 15, 2016895, 11, 2013443, UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 517, 0, 0},
	{"system/cert-manager", TookFailing, "subcharts", "fail", 53, 362764, 3380, 0, 0, 0, 0, 1, 47, 355131, 43, 108999, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 1542, 0, 0},
	{"system/cert-manager-crds", TookRendered, "size", "", 12, 983271, 78, 0, 7, 981857, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 191, 0, 0, 0},
	{"system/cert-manager-issuers", TookFailing, "proof", "index", 6, 12497, 34, 0, 1, 5457, UsesInclude | UsesDefine | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 58, 0, 0, 0},
	{"system/cilium", TookRendered, "subcharts", "", 177, 1465672, 3610, 0, 1, 643, 0, 1, 166, 1448353, 148, 420702, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 5855, 0, 0},
	{"system/cilium-networkpolicy", TookRendered, "", "", 4, 7737, 0, 0, 1, 1888, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/clickhouse-operator", TookRendered, "subcharts", "", 37, 897282, 335, 0, 0, 0, 0, 1, 34, 896463, 21, 35969, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesWith | UsesVariable, 4, 258544, 0, 299, 0, 0},
	{"system/clickhouse-rd", TookSettled, "", "", 5, 12073, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/cluster-autoscaler", TookRendered, "subcharts", "", 28, 132688, 71, 0, 0, 0, 0, 1, 23, 131670, 18, 54863, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 625, 0, 0},
	{"system/clustersecret-operator", TookRendered, "subcharts", "", 21, 33384, 27, 0, 0, 0, 0, 1, 17, 32854, 12, 20230, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesWith | UsesVariable, 1, 3402, 0, 238, 2, 0},
	{"system/computeplane-rd", TookSettled, "", "", 5, 15373, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/coredns", TookRendered, "subcharts", "", 27, 95446, 2571, 0, 1, 1172, 0, 1, 21, 86836, 17, 35856, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 5, 707, 0, 0},
	{"system/cozy-proxy", TookRendered, "subcharts", "", 10, 3695, 43, 0, 0, 0, 0, 1, 7, 3117, 5, 2747, UsesInclude | UsesDefine | UsesToYaml | UsesVariable, 0, 0, 0, 48, 0, 0},
	{"system/cozystack-api", TookFailing, "proof", "index", 23, 21364, 158, 0, 13, 11232, UsesLookup | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 31, 0, 0, 0},
	{"system/cozystack-basics", TookRendered, "proof", "", 21, 73304, 13, 0, 9, 31311, UsesInclude | UsesToYaml | UsesLookup | UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 36, 0, 0, 0},
	{"system/cozystack-controller", TookRendered, "proof", "", 16, 43570, 508, 0, 6, 4770, UsesRange | UsesFiles | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0},
	{"system/cozystack-scheduler", TookRendered, "subcharts", "", 28, 104293, 0, 0, 1, 457, 0, 1, 9, 79329, 6, 5478, UsesToYaml | UsesWith, 1, 72819, 0, 19, 0, 0},
	{"system/dashboard", TookFailing, "proof", "index", 234, 903710, 278, 0, 18, 24347, UsesInclude | UsesRange | UsesLookup | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0},
	{"system/etcd-operator", TookRendered, "proof", "", 12, 27412, 2647, 0, 5, 12761, UsesToYaml | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 47, 0, 0, 0},
	{"system/etcd-operator-crds", TookSettled, "", "", 7, 341104, 0, 0, 3, 338264, UsesDefine | UsesRange | UsesLookup | UsesRequired | UsesFail, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/etcd-rd", TookSettled, "", "", 5, 6637, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/external-dns", TookRendered, "subcharts", "", 22, 121361, 1094, 0, 0, 0, 0, 1, 18, 119825, 9, 27580, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFail | UsesWith | UsesVariable, 1, 4233, 0, 521, 0, 0},
	{"system/external-dns-rd", TookSettled, "", "", 5, 7193, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/external-secrets-operator", TookRendered, "subcharts", "", 46, 861462, 3864, 0, 0, 0, 0, 1, 40, 850175, 35, 787078, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 952, 0, 0},
	{"system/flux-plunger", TookSettled, "", "", 8, 4361, 129, 0, 4, 2579, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0},
	{"system/flux-shard-operator", TookRendered, "proof", "", 15, 22334, 1036, 0, 8, 7836, UsesRange | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0},
	{"system/foundationdb-operator", TookRendered, "subcharts", "", 16, 468439, 73, 0, 0, 0, 0, 1, 11, 465489, 6, 9288, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesWith | UsesVariable, 3, 453711, 0, 140, 0, 0},
	{"system/foundationdb-rd", TookSettled, "", "", 5, 12973, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/gateway-api-crds", TookSettled, "", "", 4, 1290277, 0, 0, 1, 1284463, UsesInclude | UsesDefine | UsesRequired | UsesFail, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/goldpinger", TookRendered, "subcharts", "", 18, 17455, 193, 0, 0, 0, 0, 1, 15, 16915, 12, 11881, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesWith | UsesVariable, 0, 0, 0, 224, 0, 0},
	{"system/gpu-operator", TookRendered, "subcharts", "", 59, 411151, 2289, 0, 1, 1040, UsesVariable, 2, 47, 382145, 36, 107357, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFail | UsesWith | UsesVariable, 3, 238496, 11, 1655, 0, 0},
	{"system/grafana-operator", TookRendered, "subcharts", "", 31, 826886, 55, 0, 2, 1638, UsesFiles, 1, 22, 822004, 8, 10839, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesWith | UsesVariable, 7, 791400, 8, 196, 0, 0},
	{"system/hami", TookRendered, "subcharts", "", 40, 114999, 490, 0, 0, 0, 0, 1, 35, 106526, 32, 75393, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFiles | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 859, 0, 0},
	{"system/harbor", TookRendered, "subcharts", "", 70, 467283, 127, 0, 3, 4252, UsesLookup | UsesWith | UsesVariable, 1, 62, 457560, 57, 167095, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesRequired | UsesWith | UsesVariable, 0, 0, 37, 2702, 3, 1},
	{"system/harbor-rd", TookSettled, "", "", 5, 18038, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/hetzner-robotlb", TookRendered, "subcharts", "", 11, 7804, 74, 0, 0, 0, 0, 1, 8, 7379, 5, 4964, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesWith | UsesVariable, 0, 0, 0, 100, 0, 0},
	{"system/http-cache-rd", TookSettled, "", "", 5, 7568, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/info-rd", TookSettled, "", "", 5, 2991, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/ingress-nginx", TookRendered, "subcharts", "", 125, 278283, 3110, 0, 0, 0, 0, 1, 119, 272299, 50, 111872, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 1823, 0, 0},
	{"system/ingress-rd", TookSettled, "", "", 5, 5763, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/kafka-operator", TookRendered, "subcharts", "", 56, 1707290, 167, 0, 1, 238, UsesRange | UsesFiles | UsesVariable, 1, 51, 1694419, 24, 37597, UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesRequired | UsesWith | UsesVariable, 11, 1110518, 6, 375, 0, 0},
	{"system/kafka-rd", TookSettled, "", "", 5, 10987, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/kamaji", TookRendered, "subcharts", "", 50, 1407048, 2331, 0, 0, 0, 0, 2, 42, 1398015, 16, 17336, UsesInclude | UsesDefine | UsesToYaml | UsesTpl | UsesFiles | UsesRequired | UsesWith | UsesVariable, 3, 684987, 0, 246, 0, 0},
	{"system/keycloak", TookFailing, "proof", "index", 17, 71675, 8722, 0, 9, 29719, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 260, 0, 0, 0},
	{"system/keycloak-configure", TookFailing, "proof", "index", 10, 17980, 1717, 0, 5, 12617, UsesToYaml | UsesLookup | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 50, 0, 0, 0},
	{"system/keycloak-operator", TookRendered, "subcharts", "", 53, 256443, 324, 0, 0, 0, 0, 1, 47, 229341, 13, 20841, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 14, 169361, 0, 183, 0, 0},
	{"system/kilo", TookSettled, "", "", 11, 57793, 276, 0, 4, 7263, UsesWith, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0},
	{"system/kubeovn", TookRendered, "subcharts", "", 35, 251048, 2452, 0, 0, 0, 0, 1, 28, 239919, 25, 232718, UsesInclude | UsesDefine | UsesRange | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 562, 2, 0},
	{"system/kubeovn-plunger", TookSettled, "", "", 9, 4349, 188, 0, 5, 2473, 0, 0, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0},
	{"system/kubeovn-webhook", TookRendered, "proof", "", 19, 34916, 160, 0, 8, 6560, UsesInclude | UsesDefine, 0, 0, 0, 0, 0, 0, 0, 0, 58, 0, 0, 0},
	{"system/kubernetes-nodes-rd", TookSettled, "", "", 5, 29392, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/kubernetes-rd", TookSettled, "", "", 5, 49595, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/kuberture", TookFailing, "subcharts", "fail", 21, 33560, 1325, 0, 0, 0, 0, 1, 16, 16640, 13, 11043, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 149, 0, 0},
	{"system/kubevirt", TookFailing, "proof", "index", 8, 18142, 2055, 0, 3, 3789, UsesRange | UsesToYaml | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0},
	{"system/kubevirt-cdi", TookFailing, "proof", "index", 6, 3543, 233, 0, 3, 2774, UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0},
	{"system/kubevirt-cdi-operator", TookRendered, "size", "", 4, 357896, 0, 0, 1, 356359, UsesRange | UsesLookup, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/kubevirt-csi-node", TookSettled, "", "", 7, 14129, 524, 0, 2, 9193, UsesRange | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 0},
	{"system/kubevirt-instancetypes", TookSettled, "", "", 7, 169904, 1, 0, 3, 157962, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/kubevirt-operator", TookRendered, "size", "", 5, 492731, 1, 0, 2, 491991, UsesDefine | UsesRange | UsesLookup | UsesFail, 0, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0},
	{"system/lineage-controller-webhook", TookSettled, "", "", 16, 16712, 762, 0, 8, 5643, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 0},
	{"system/linstor", TookRendered, "proof", "", 33, 111316, 1472, 0, 11, 13072, UsesToYaml | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 36, 0, 0, 0},
	{"system/linstor-gui", TookFailing, "proof", "index", 18, 42846, 818, 0, 10, 20449, UsesInclude | UsesDefine | UsesLookup | UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 111, 0, 0, 0},
	{"system/linstor-scheduler", TookRendered, "subcharts", "", 27, 79540, 1132, 0, 1, 776, 0, 1, 19, 62532, 15, 30797, UsesInclude | UsesDefine | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 1, 412, 0, 0},
	{"system/local-ccm", TookRendered, "subcharts", "", 17, 19261, 0, 0, 0, 0, 0, 1, 14, 18566, 10, 10800, UsesInclude | UsesDefine | UsesToYaml | UsesWith | UsesVariable, 0, 0, 0, 161, 0, 0},
	{"system/mariadb-operator", TookRendered, "subcharts", "", 37, 870533, 125, 0, 0, 0, 0, 2, 33, 869937, 24, 839743, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesRequired | UsesWith | UsesVariable, 0, 0, 0, 568, 0, 0},
	{"system/mariadb-rd", TookSettled, "", "", 5, 11642, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/metallb", TookRendered, "subcharts", "", 52, 291020, 5766, 0, 0, 0, 0, 4, 47, 274550, 26, 204735, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesRequired | UsesFail | UsesWith | UsesVariable, 6, 2364, 0, 1113, 0, 0},
	{"system/metrics-server", TookRendered, "subcharts", "", 31, 66336, 4034, 0, 0, 0, 0, 1, 26, 58341, 19, 18486, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesWith | UsesVariable, 0, 0, 0, 316, 0, 0},
	{"system/mongodb-operator", TookRendered, "subcharts", "", 16, 1369873, 43, 0, 0, 0, 0, 1, 12, 1369029, 6, 12027, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesWith | UsesVariable, 1, 1343745, 0, 164, 0, 0},
	{"system/mongodb-rd", TookSettled, "", "", 5, 9695, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/monitoring", TookFailing, "proof", "nil", 35, 121156, 5943, 0, 20, 73769, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 520, 0, 0, 0},
	{"system/monitoring-agents", TookRendered, "subcharts", "", 132, 411561, 16840, 0, 18, 27112, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesVariable, 3, 75, 219046, 61, 116200, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 19, 2104, 0, 0},
	{"system/monitoring-rd", TookSettled, "", "", 5, 25008, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/multus", TookRendered, "proof", "", 8, 51987, 465, 0, 1, 13376, UsesFail | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0},
	{"system/nats", TookRendered, "subcharts", "", 58, 94832, 296, 0, 0, 0, 0, 1, 54, 93093, 18, 27191, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 587, 0, 0},
	{"system/nats-rd", TookSettled, "", "", 5, 5742, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/nfs-driver", TookRendered, "subcharts", "", 20, 88932, 19, 0, 0, 0, 0, 1, 14, 87945, 11, 81268, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesFail | UsesWith, 0, 0, 0, 335, 0, 0},
	{"system/objectstorage-controller", TookSettled, "", "", 8, 42010, 174, 0, 1, 26973, UsesRequired, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0},
	{"system/openbao", TookRendered, "subcharts", "", 64, 316512, 66, 0, 0, 0, 0, 1, 60, 315048, 53, 121734, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFiles | UsesWith | UsesVariable, 0, 0, 0, 2137, 0, 0},
	{"system/openbao-rd", TookSettled, "", "", 5, 4903, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/opencost", TookRendered, "subcharts", "", 36, 139495, 265, 0, 1, 227, 0, 1, 31, 137631, 26, 69231, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 1101, 0, 0},
	{"system/opensearch-operator", TookRendered, "subcharts", "", 33, 521646, 682, 0, 0, 0, 0, 1, 27, 515069, 13, 16500, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesFiles | UsesWith | UsesVariable, 0, 0, 0, 131, 0, 0},
	{"system/opensearch-rd", TookSettled, "", "", 5, 8030, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/ouroboros", TookRendered, "subcharts", "", 24, 88639, 3188, 0, 0, 0, 0, 1, 18, 68946, 16, 55142, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 528, 0, 0},
	{"system/piraeus-operator", TookRendered, "subcharts", "", 24, 141369, 132, 0, 2, 360, UsesRange | UsesFiles | UsesVariable, 1, 15, 133361, 11, 129537, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesFail | UsesWith | UsesVariable, 0, 0, 8, 212, 0, 0},
	{"system/piraeus-operator-crds", TookRendered, "size", "", 5, 105452, 18, 0, 1, 105244, UsesDefine, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
	{"system/postgres-operator", TookRendered, "subcharts", "", 49, 1430759, 3586, 0, 2, 6385, UsesRange | UsesFiles | UsesRequired | UsesVariable, 2, 39, 1381140, 21, 1263036, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 44, 478, 0, 0},
	{"system/postgres-rd", TookSettled, "", "", 5, 20681, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/prometheus-operator-crds", TookRendered, "subcharts", "", 23, 4453336, 459, 0, 0, 0, 0, 2, 19, 4447349, 10, 4438756, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesWith, 1, 41, 0, 50, 0, 0},
	{"system/qdrant", TookRendered, "subcharts", "", 21, 60127, 11, 0, 0, 0, 0, 1, 18, 59791, 12, 32222, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesWith | UsesVariable, 0, 0, 0, 594, 0, 0},
	{"system/qdrant-rd", TookSettled, "", "", 5, 5933, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/rabbitmq-operator", TookSettled, "", "", 5, 436991, 0, 0, 2, 436078, UsesInclude | UsesDefine | UsesRange | UsesLookup | UsesRequired, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/rabbitmq-rd", TookSettled, "", "", 5, 6092, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/redis-operator", TookRendered, "subcharts", "", 16, 1033733, 561, 0, 0, 0, 0, 1, 11, 1030236, 7, 10932, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesWith | UsesVariable, 1, 1016146, 0, 191, 0, 0},
	{"system/redis-rd", TookSettled, "", "", 5, 8685, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/reloader", TookRendered, "subcharts", "", 25, 59394, 3128, 0, 0, 0, 0, 1, 20, 47525, 15, 32698, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesWith | UsesVariable, 0, 0, 0, 552, 0, 0},
	{"system/seaweedfs", TookRendered, "subcharts", "", 93, 503648, 11584, 0, 5, 21191, UsesInclude | UsesDefine | UsesRange | UsesTpl | UsesLookup | UsesFail | UsesVariable, 1, 65, 405763, 59, 236578, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesFail | UsesWith | UsesVariable, 0, 0, 78, 3803, 0, 0},
	{"system/seaweedfs-db", TookRendered, "schema", "", 7, 6351, 591, 1420, 1, 889, UsesToYaml | UsesLookup | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0},
	{"system/seaweedfs-rd", TookSettled, "", "", 5, 51669, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/securitygroup-controller", TookSettled, "", "", 9, 8732, 306, 0, 4, 3468, UsesToYaml | UsesWith, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0},
	{"system/snapshot-controller", TookRendered, "subcharts", "", 30, 158441, 300, 0, 0, 0, 0, 1, 25, 157451, 14, 24629, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesWith | UsesVariable, 6, 91815, 0, 345, 0, 0},
	{"system/tcp-balancer-rd", TookSettled, "", "", 5, 19615, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/telepresence", TookRendered, "subcharts", "", 29, 47548, 1, 0, 0, 0, 0, 1, 26, 47148, 20, 38764, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesLookup | UsesRequired | UsesFail | UsesWith | UsesVariable, 0, 0, 0, 592, 0, 0},
	{"system/tenant-rd", TookSettled, "", "", 5, 6020, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/velero", TookRendered, "subcharts", "", 51, 299243, 3238, 0, 1, 971, 0, 1, 45, 287865, 25, 56145, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesFail | UsesWith | UsesVariable, 13, 159137, 0, 1083, 0, 0},
	{"system/vertical-pod-autoscaler", TookRendered, "subcharts", "", 79, 372291, 1259, 0, 1, 2614, 0, 2, 73, 338926, 60, 156168, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesRequired | UsesFail | UsesWith | UsesVariable, 2, 42231, 5, 2149, 0, 0},
	{"system/vertical-pod-autoscaler-crds", TookSettled, "", "", 5, 44399, 0, 0, 1, 41455, UsesRequired, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"system/victoria-metrics-operator", TookRendered, "subcharts", "", 47, 1845360, 335, 0, 0, 0, 0, 3, 43, 1843830, 25, 60987, UsesInclude | UsesDefine | UsesRange | UsesToYaml | UsesTpl | UsesLookup | UsesFiles | UsesFail | UsesWith | UsesVariable, 5, 1699928, 0, 1266, 2, 0},
	{"system/virtualprivatecloud-rd", TookSettled, "", "", 5, 3847, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/vm-default-images", TookRendered, "proof", "", 4, 7870, 6122, 0, 1, 1433, UsesRange | UsesRequired | UsesWith, 0, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0},
	{"system/vm-disk-rd", TookSettled, "", "", 5, 6250, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/vm-instance-rd", TookSettled, "", "", 5, 9730, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/vpn-rd", TookSettled, "", "", 5, 6628, 3, 0, 1, 89, UsesRange | UsesFiles | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0},
	{"system/vsnap-crd", TookSettled, "", "", 6, 60459, 0, 0, 3, 56672, UsesRequired | UsesFail, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{"tests/cozy-lib-tests", TookFailing, "proof", "fail", 16, 29899, 0, 0, 6, 1923, UsesInclude | UsesRange | UsesWith | UsesVariable, 0, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0},
}
