package manifestgen

import (
	"math/rand"
	"strings"
)

// inventedShare is how many of twenty leaf fields are invented (a new
// name and a description of generated prose) rather than drawn from
// leafFields. Real CRDs repeat a few descriptions (object references,
// conditions) and describe most fields in words of their own: with this
// share a manifest compresses as real upstream manifests do (gzip -9:
// about 12 % of the YAML; gzip -9 of its base64, as a Helm release holds
// it: about 24 %; Cluster API's CRDs measure 12.2 % and 22.7 %), not twice
// as well, as with leafFields alone.
const inventedShare = 3

// words are the vocabulary of generated descriptions, as controller-gen
// copies them from Go doc comments.
var words = strings.Fields(`the a an of to is in for and or be that this it by on with as are when not
if will from which field set used should can must may default value specifies defines name
names reference object objects resource resources cluster clusters machine machines node nodes
template templates provider providers controller controllers version versions api spec status
condition conditions infrastructure bootstrap control plane kubernetes network networks address
addresses interface interfaces endpoint endpoints certificate certificates secret secrets key keys
label labels annotation annotations selector selectors pool pools disk disks volume volumes image
images configuration settings optional required deprecated ignored omitted empty list map string
integer boolean duration timeout interval retry retries limit limits request requests replica
replicas rollout strategy upgrade upgrades delete deletion create creation update updates
reconcile reconciliation owner owners failure failures domain domains zone zones region regions
region subnet subnets gateway gateways route routes firewall rules rule policy policies server
servers client clients user users group groups role roles token tokens credential credentials
identity identities account accounts ssh public private host hosts port ports protocol tcp udp
ipv4 ipv6 cidr prefix mtu vlan bridge dns ntp proxy http https url path file files directory
content format encoding base64 gzip json yaml size bytes memory cpu cores sockets storage
placement affinity taint taints toleration tolerations priority phase ready available
initialized provisioned running stopped paused machinepool machineset machinedeployment
kubeadm cloud-init ignition userdata metadata hostname timezone locale kernel boot firmware
uefi bios tpm snapshot clone linked full thin provisioning datastore datacenter folder
vcenter proxmox hetzner metal3 openstack aws azure gcp vsphere docker talos kamaji k0smotron
between within after before during while until unless only also however therefore otherwise
each every all any some none more less most least first last next previous current desired
observed actual expected maximum minimum number count percentage ratio period seconds minutes
hours generation observedgeneration uid finalizer finalizers immutable mutable validated
validation webhook webhooks admission conversion served stored schema property properties
controlplaneendpoint loadbalancer ingress egress service services namespace namespaces pod pods
container containers daemon daemonset deployment statefulset job jobs lease leader election
metrics health probe probes liveness readiness startup log logs verbosity level levels feature
gates gate flag flags experimental alpha beta stable contract contracts compatible compatibility
existing new old remaining pending terminating failed succeeded unknown true false nil zero`)

// prose is n lines of generated description, each a sentence of 6 to 16
// words.
func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		k := 6 + r.Intn(11)
		for j := range k {
			w := words[r.Intn(len(words))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteByte('.')
	}
	return b.String()
}

var fieldTypes = []string{"string", "string", "string", "integer", "boolean", "array"}

// inventField is a leaf field of a new camelCase name (two or three
// words) with a description of generated prose.
func inventField(r *rand.Rand) field {
	var name strings.Builder
	for i := range 2 + r.Intn(2) {
		w := strings.ReplaceAll(words[r.Intn(len(words))], "-", "")
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		name.WriteString(w)
	}
	f := field{name: name.String(), typ: fieldTypes[r.Intn(len(fieldTypes))], desc: prose(r, 1+r.Intn(4))}
	if f.typ == "integer" {
		f.format = []string{"int32", "int64"}[r.Intn(2)]
	}
	return f
}
