// Package manifestgen writes realistic Cluster API provider manifests of a
// chosen size, deterministically.
//
// It writes realistic Cluster API provider manifests
// (Namespace, CRDs with controller-gen style OpenAPI schemas, RBAC, a
// Deployment, a Service, webhooks, cert-manager objects) of a chosen size,
// deterministically: the same Spec gives the same bytes. The benchmarks
// compress them and the example upstream files were generated with it, so
// compression figures reflect YAML that looks like the real thing (long
// English descriptions, deep indentation, repeated but varying names).
package manifestgen

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
)

// Spec says what to generate.
type Spec struct {
	// Provider is the clusterctl provider label, e.g. infrastructure-proxmox.
	Provider string
	// Prefix names the objects, e.g. capmox (capmox-system, capmox-controller-manager).
	Prefix string
	// Group is the API group of the CRDs, e.g. infrastructure.cluster.x-k8s.io.
	Group string
	// Kinds are the CRD kinds; more are invented (with varying names) until
	// Size is reached.
	Kinds []string
	// Versions are the API versions served by each CRD, the last one
	// stored; default v1alpha1, v1alpha2.
	Versions []string
	// Image is the manager image.
	Image string
	// Size is the minimum size in bytes; 0 generates just Kinds.
	Size int
	// Seed makes the output vary between providers.
	Seed int64
}

// Generate returns the manifest for s.
func Generate(s Spec) []byte {
	if len(s.Versions) == 0 {
		s.Versions = []string{"v1alpha1", "v1alpha2"}
	}
	r := rand.New(rand.NewSource(s.Seed))
	var b bytes.Buffer
	ns := s.Prefix + "-system"
	fmt.Fprintf(&b, namespaceTmpl, s.Provider, ns)
	kinds := append([]string(nil), s.Kinds...)
	var plurals []string
	for i := 0; ; i++ {
		if i >= len(kinds) {
			// The RBAC and workload objects that follow add ~6 KiB.
			if s.Size == 0 || b.Len()+6<<10 >= s.Size {
				break
			}
			kinds = append(kinds, inventKind(r, s.Kinds, i))
		}
		k := kinds[i]
		plural := strings.ToLower(k) + "s"
		plurals = append(plurals, plural)
		crd(&b, r, s, k, plural, ns)
	}
	fmt.Fprintf(&b, serviceAccountTmpl, s.Provider, s.Prefix, ns)
	clusterRole(&b, s, plurals)
	b.WriteString(tailTmpl)
	out := b.Bytes()
	out = bytes.ReplaceAll(out, []byte("@PROVIDER@"), []byte(s.Provider))
	out = bytes.ReplaceAll(out, []byte("@PREFIX@"), []byte(s.Prefix))
	out = bytes.ReplaceAll(out, []byte("@NS@"), []byte(ns))
	out = bytes.ReplaceAll(out, []byte("@IMAGE@"), []byte(s.Image))
	out = bytes.ReplaceAll(out, []byte("@GROUP@"), []byte(s.Group))
	out = bytes.ReplaceAll(out, []byte("@VERSION@"), []byte(s.Versions[len(s.Versions)-1]))
	return out
}

var kindStems = []string{"Cluster", "Machine", "MachineTemplate", "ClusterTemplate", "MachinePool", "Network", "LoadBalancer", "Image", "Volume", "Host", "Zone", "Placement", "Firewall", "Gateway", "Subnet"}

func inventKind(r *rand.Rand, base []string, i int) string {
	vendor := "Proxmox"
	if len(base) > 0 {
		vendor = strings.TrimSuffix(base[0], "Cluster")
	}
	return fmt.Sprintf("%s%s%s", vendor, kindStems[r.Intn(len(kindStems))], romanish(i))
}

func romanish(i int) string {
	letters := "ABCDEFGHJKLMNPQRSTUVWXYZ"
	s := ""
	for n := i + 1; n > 0; n /= len(letters) {
		s = string(letters[n%len(letters)]) + s
	}
	return s
}

// field is one schema property with a description and a type.
type field struct {
	name, desc, typ string
	children        []field
	enum            []string
	format          string
}

var leafFields = []field{
	{name: "name", typ: "string", desc: "Name of the referent.\nThis field is effectively required, but due to backwards compatibility is\nallowed to be empty. Instances of this type with an empty value here are\nalmost certainly wrong.\nMore info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names"},
	{name: "namespace", typ: "string", desc: "Namespace of the referent.\nMore info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/"},
	{name: "uid", typ: "string", desc: "UID of the referent.\nMore info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids"},
	{name: "host", typ: "string", desc: "host is the hostname or IP on which the API server is serving."},
	{name: "port", typ: "integer", format: "int32", desc: "port is the port on which the API server is serving."},
	{name: "allowedNodes", typ: "array", desc: "AllowedNodes specifies all Proxmox nodes which will be considered\nfor operations. This implies that VMs can be cloned on different nodes from\nthe node which holds the VM template.\nThis field is optional and should only be set if you want to restrict\nthe nodes where the VM can be cloned.\nIf not set, the ProxmoxCluster will be used to determine the nodes."},
	{name: "templateID", typ: "integer", format: "int32", desc: "TemplateID the vm_template vmid used for cloning a new VM."},
	{name: "sourceNode", typ: "string", desc: "SourceNode is the initially selected proxmox node.\nThis node will be used to locate the template VM, which will\nbe used for cloning operations.\n\nCloning will be performed according to the configuration.\nSetting the `Target` field will tell Proxmox to clone the\nVM on that target node.\n\nWhen Target is not set and the ProxmoxCluster contains\na set of `AllowedNodes`, the algorithm will instead evenly\ndistribute the VMs across the nodes from that list.\n\nIf neither a `Target` nor `AllowedNodes` was set, the VM\nwill be cloned onto the same node as SourceNode."},
	{name: "description", typ: "string", desc: "Description for the new VM."},
	{name: "format", typ: "string", enum: []string{"raw", "qcow2", "vmdk"}, desc: "Format for VM disk."},
	{name: "full", typ: "boolean", desc: "Full Create a full copy of all disks.\nThis is always done when you clone a normal VM.\nCreate a Full clone by default."},
	{name: "pool", typ: "string", desc: "Pool Add the new VM to the specified pool."},
	{name: "snapName", typ: "string", desc: "SnapName The name of the snapshot."},
	{name: "storage", typ: "string", desc: "Storage for full clone."},
	{name: "target", typ: "string", desc: "Target node. Only allowed if the original VM is on shared storage."},
	{name: "numSockets", typ: "integer", format: "int32", desc: "NumSockets is the number of CPU sockets in a virtual machine.\nDefaults to the property value in the template from which the virtual machine is cloned."},
	{name: "numCores", typ: "integer", format: "int32", desc: "NumCores is the number of cores per CPU socket in a virtual machine.\nDefaults to the property value in the template from which the virtual machine is cloned."},
	{name: "memoryMiB", typ: "integer", format: "int32", desc: "MemoryMiB is the size of a virtual machine's memory, in MiB.\nDefaults to the property value in the template from which the virtual machine is cloned."},
	{name: "providerID", typ: "string", desc: "ProviderID is the virtual machine BIOS UUID formatted as\nproxmox://6c3fa683-bef9-4425-b413-eaa45a9d6191"},
	{name: "virtualMachineID", typ: "integer", format: "int64", desc: "VirtualMachineID is the Proxmox identifier for the ProxmoxMachine VM."},
	{name: "failureReason", typ: "string", desc: "FailureReason will be set in the event that there is a terminal problem\nreconciling the Machine and will contain a succinct value suitable\nfor machine interpretation.\n\nThis field should not be set for transitive errors that a controller\nfaces that are expected to be fixed automatically over\ntime (like service outages), but instead indicate that something is\nfundamentally wrong with the Machine's spec or the configuration of\nthe controller, and that manual intervention is required."},
	{name: "failureMessage", typ: "string", desc: "FailureMessage will be set in the event that there is a terminal problem\nreconciling the Machine and will contain a more verbose string suitable\nfor logging and human consumption."},
	{name: "ready", typ: "boolean", desc: "Ready indicates the Docker infrastructure has been provisioned and is ready."},
	{name: "bridge", typ: "string", desc: "Bridge is the network bridge to attach to the machine.", format: ""},
	{name: "model", typ: "string", enum: []string{"e1000", "virtio", "rtl8139", "vmxnet3"}, desc: "Model is the network device model."},
	{name: "mtu", typ: "integer", format: "int32", desc: "MTU is the network device Maximum Transmission Unit.\nWhen set to 1, virtio devices inherit the MTU value from the underlying bridge."},
	{name: "vlan", typ: "integer", format: "int32", desc: "VLAN is the network L2 VLAN."},
	{name: "dnsServers", typ: "array", desc: "DNSServers contains information about nameservers used by the machines network-config."},
	{name: "gateway", typ: "string", desc: "Gateway is the network gateway."},
	{name: "prefix", typ: "integer", format: "int32", desc: "Prefix is the network prefix to use."},
}

var objectFields = []string{"cloneSpec", "network", "disks", "controlPlaneEndpoint", "credentialsRef", "ipv4Config", "ipv6Config", "checks", "metadataSettings", "vmIDRange", "schedulerHints", "template", "status", "conditions", "bootDisk", "additionalVolumes", "routingPolicy", "vrfs", "addresses", "tags"}

const condDesc = "Condition defines an observation of a Cluster API resource operational state."

func crd(b *bytes.Buffer, r *rand.Rand, s Spec, kind, plural, ns string) {
	singular := strings.ToLower(kind)
	fmt.Fprintf(b, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    cert-manager.io/inject-ca-from: %[5]s/%[6]s-serving-cert
    controller-gen.kubebuilder.io/version: v0.16.5
  labels:
    cluster.x-k8s.io/provider: %[1]s
    cluster.x-k8s.io/v1beta1: %[9]s
  name: %[3]s.%[4]s
spec:
  group: %[4]s
  names:
    categories:
    - cluster-api
    kind: %[2]s
    listKind: %[2]sList
    plural: %[3]s
    shortNames:
    - %[7]s
    singular: %[8]s
  scope: Namespaced
  versions:
`, s.Provider, kind, plural, s.Group, ns, s.Prefix, shortName(kind), singular, s.Versions[len(s.Versions)-1])
	for vi, version := range s.Versions {
		fmt.Fprintf(b, `  - additionalPrinterColumns:
    - description: Cluster to which this %[1]s belongs
      jsonPath: .metadata.labels.cluster\.x-k8s\.io/cluster-name
      name: Cluster
      type: string
    - description: %[1]s ready status
      jsonPath: .status.ready
      name: Ready
      type: string
    - description: Time duration since creation of %[1]s
      jsonPath: .metadata.creationTimestamp
      name: Age
      type: date
    name: %[2]s
    schema:
      openAPIV3Schema:
        description: %[1]s is the Schema for the %[3]s API.
        properties:
          apiVersion:
            description: |-
              APIVersion defines the versioned schema of this representation of an object.
              Servers should convert recognized schemas to the latest internal value, and
              may reject unrecognized values.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
            type: string
          kind:
            description: |-
              Kind is a string value representing the REST resource this object represents.
              Servers may infer this from the endpoint the client submits requests to.
              Cannot be updated.
              In CamelCase.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
            type: string
          metadata:
            type: object
`, kind, version, plural)
		for _, part := range []string{"spec", "status"} {
			fmt.Fprintf(b, "          %s:\n            description: %s%s defines the %s state of %s.\n", part, kind, strings.ToUpper(part[:1])+part[1:], map[string]string{"spec": "desired", "status": "observed"}[part], kind)
			props(b, r, 12, 0, kind)
			// A structural schema types every node: without this the API
			// server refuses the CRD ("properties[spec].type: Required value").
			b.WriteString("            type: object\n")
		}
		b.WriteString("        type: object\n")
		last := vi == len(s.Versions)-1
		if !last {
			b.WriteString("    deprecated: true\n")
		}
		fmt.Fprintf(b, "    served: true\n    storage: %v\n    subresources:\n      status: {}\n", last)
	}
}

func props(b *bytes.Buffer, r *rand.Rand, indent, depth int, kind string) {
	pad := strings.Repeat(" ", indent)
	n := 3 + r.Intn(6)
	if depth >= 2 {
		n = 2 + r.Intn(3)
	}
	fmt.Fprintf(b, "%sproperties:\n", pad)
	used := map[string]bool{}
	var names []string
	for i := 0; i < n; i++ {
		if depth < 3 && r.Intn(3) == 0 {
			name := objectFields[r.Intn(len(objectFields))]
			if used[name] {
				continue
			}
			used[name] = true
			names = append(names, name)
			fmt.Fprintf(b, "%s  %s:\n%s    description: |-\n", pad, name, pad)
			fmt.Fprintf(b, "%s      %s holds the %s settings of the %s.\n", pad, strings.ToUpper(name[:1])+name[1:], name, kind)
			for _, l := range strings.Split(prose(r, 1+r.Intn(3)), "\n") {
				fmt.Fprintf(b, "%s      %s\n", pad, l)
			}
			if name == "conditions" {
				fmt.Fprintf(b, "%s    items:\n%s      description: %s\n", pad, pad, condDesc)
				conditionProps(b, indent+6)
				fmt.Fprintf(b, "%s      required:\n%s      - lastTransitionTime\n%s      - status\n%s      - type\n%s      type: object\n%s    type: array\n", pad, pad, pad, pad, pad, pad)
				continue
			}
			props(b, r, indent+4, depth+1, kind)
			fmt.Fprintf(b, "%s    type: object\n", pad)
			continue
		}
		f := leafFields[r.Intn(len(leafFields))]
		if r.Intn(20) < inventedShare {
			f = inventField(r)
		}
		if used[f.name] {
			continue
		}
		used[f.name] = true
		names = append(names, f.name)
		fmt.Fprintf(b, "%s  %s:\n", pad, f.name)
		if strings.Contains(f.desc, "\n") {
			fmt.Fprintf(b, "%s    description: |-\n", pad)
			for _, l := range strings.Split(f.desc, "\n") {
				if l == "" {
					b.WriteString("\n")
					continue
				}
				fmt.Fprintf(b, "%s      %s\n", pad, l)
			}
		} else {
			fmt.Fprintf(b, "%s    description: %s\n", pad, f.desc)
		}
		if len(f.enum) > 0 {
			fmt.Fprintf(b, "%s    enum:\n", pad)
			for _, e := range f.enum {
				fmt.Fprintf(b, "%s    - %s\n", pad, e)
			}
		}
		if f.format != "" {
			fmt.Fprintf(b, "%s    format: %s\n", pad, f.format)
		}
		if f.typ == "integer" && r.Intn(2) == 0 {
			fmt.Fprintf(b, "%s    minimum: %d\n", pad, r.Intn(2))
		}
		if f.typ == "array" {
			fmt.Fprintf(b, "%s    items:\n%s      type: string\n%s    type: array\n", pad, pad, pad)
			if r.Intn(2) == 0 {
				fmt.Fprintf(b, "%s    x-kubernetes-list-type: set\n", pad)
			}
			continue
		}
		fmt.Fprintf(b, "%s    type: %s\n", pad, f.typ)
	}
	if len(names) > 1 && r.Intn(3) == 0 {
		fmt.Fprintf(b, "%srequired:\n%s- %s\n", pad, pad, names[0])
	}
}

func conditionProps(b *bytes.Buffer, indent int) {
	pad := strings.Repeat(" ", indent)
	fmt.Fprintf(b, `%[1]sproperties:
%[1]s  lastTransitionTime:
%[1]s    description: |-
%[1]s      Last time the condition transitioned from one status to another.
%[1]s      This should be when the underlying condition changed. If that is not known, then using the time when
%[1]s      the API field changed is acceptable.
%[1]s    format: date-time
%[1]s    type: string
%[1]s  message:
%[1]s    description: |-
%[1]s      A human readable message indicating details about the transition.
%[1]s      This field may be empty.
%[1]s    type: string
%[1]s  reason:
%[1]s    description: |-
%[1]s      The reason for the condition's last transition in CamelCase.
%[1]s      The specific API may choose whether or not this field is considered a guaranteed API.
%[1]s      This field may be empty.
%[1]s    type: string
%[1]s  severity:
%[1]s    description: |-
%[1]s      severity provides an explicit classification of Reason code, so the users or machines can immediately
%[1]s      understand the current situation and act accordingly.
%[1]s      The Severity field MUST be set only when Status=False.
%[1]s    type: string
%[1]s  status:
%[1]s    description: status of the condition, one of True, False, Unknown.
%[1]s    type: string
%[1]s  type:
%[1]s    description: |-
%[1]s      type of condition in CamelCase or in foo.example.com/CamelCase.
%[1]s      Many .condition.type values are consistent across resources like Available, but because arbitrary conditions
%[1]s      can be useful (see .node.status.conditions), the ability to deconflict is important.
%[1]s    type: string
`, pad)
}

func shortName(kind string) string {
	var s []rune
	for _, c := range kind {
		if c >= 'A' && c <= 'Z' {
			s = append(s, c+'a'-'A')
		}
	}
	return string(s)
}

func clusterRole(b *bytes.Buffer, s Spec, plurals []string) {
	fmt.Fprintf(b, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
    cluster.x-k8s.io/provider: %s
  name: %s-manager-role
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  - events
  - secrets
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - cluster.x-k8s.io
  resources:
  - clusters
  - clusters/status
  - machines
  - machines/status
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - %s
  resources:
`, s.Provider, s.Prefix, s.Group)
	for _, p := range plurals {
		fmt.Fprintf(b, "  - %s\n", p)
	}
	b.WriteString("  verbs:\n  - create\n  - delete\n  - get\n  - list\n  - patch\n  - update\n  - watch\n")
	fmt.Fprintf(b, "- apiGroups:\n  - %s\n  resources:\n", s.Group)
	for _, p := range plurals {
		fmt.Fprintf(b, "  - %s/finalizers\n  - %s/status\n", p, p)
	}
	b.WriteString("  verbs:\n  - get\n  - patch\n  - update\n")
}

const namespaceTmpl = `apiVersion: v1
kind: Namespace
metadata:
  labels:
    cluster.x-k8s.io/provider: %s
    control-plane: controller-manager
  name: %s
`

const serviceAccountTmpl = `---
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    cluster.x-k8s.io/provider: %s
  name: %s-controller-manager
  namespace: %s
`

// tailTmpl is the Role, bindings, Service, Deployment, Certificate, Issuer
// and webhooks; the @NAME@ placeholders are substituted by Generate.
const tailTmpl = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-leader-election-role
  namespace: @NS@
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - ""
  resources:
  - events
  verbs:
  - create
  - patch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-leader-election-rolebinding
  namespace: @NS@
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: @PREFIX@-leader-election-role
subjects:
- kind: ServiceAccount
  name: @PREFIX@-controller-manager
  namespace: @NS@
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: @PREFIX@-manager-role
subjects:
- kind: ServiceAccount
  name: @PREFIX@-controller-manager
  namespace: @NS@
---
apiVersion: v1
kind: Service
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-webhook-service
  namespace: @NS@
spec:
  ports:
  - port: 443
    targetPort: webhook-server
  selector:
    cluster.x-k8s.io/provider: @PROVIDER@
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
    control-plane: controller-manager
  name: @PREFIX@-controller-manager
  namespace: @NS@
spec:
  replicas: 1
  selector:
    matchLabels:
      cluster.x-k8s.io/provider: @PROVIDER@
      control-plane: controller-manager
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/default-container: manager
      labels:
        cluster.x-k8s.io/provider: @PROVIDER@
        control-plane: controller-manager
    spec:
      containers:
      - args:
        - --leader-elect
        - --diagnostics-address=:8443
        - --insecure-diagnostics=false
        - --v=0
        command:
        - /manager
        image: @IMAGE@
        imagePullPolicy: IfNotPresent
        livenessProbe:
          httpGet:
            path: /healthz
            port: healthz
          initialDelaySeconds: 15
          periodSeconds: 20
        name: manager
        ports:
        - containerPort: 9443
          name: webhook-server
          protocol: TCP
        - containerPort: 9440
          name: healthz
          protocol: TCP
        - containerPort: 8443
          name: metrics
          protocol: TCP
        readinessProbe:
          httpGet:
            path: /readyz
            port: healthz
          initialDelaySeconds: 5
          periodSeconds: 10
        resources:
          limits:
            cpu: 500m
            memory: 256Mi
          requests:
            cpu: 10m
            memory: 64Mi
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - ALL
          privileged: false
          runAsGroup: 65532
          runAsUser: 65532
        terminationMessagePolicy: FallbackToLogsOnError
        volumeMounts:
        - mountPath: /tmp/k8s-webhook-server/serving-certs
          name: cert
          readOnly: true
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      serviceAccountName: @PREFIX@-controller-manager
      terminationGracePeriodSeconds: 10
      tolerations:
      - effect: NoSchedule
        key: node-role.kubernetes.io/master
      - effect: NoSchedule
        key: node-role.kubernetes.io/control-plane
      volumes:
      - name: cert
        secret:
          secretName: @PREFIX@-webhook-service-cert
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-serving-cert
  namespace: @NS@
spec:
  dnsNames:
  - @PREFIX@-webhook-service.@NS@.svc
  - @PREFIX@-webhook-service.@NS@.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: @PREFIX@-selfsigned-issuer
  secretName: @PREFIX@-webhook-service-cert
  subject:
    organizations:
    - k8s-sig-cluster-lifecycle
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-selfsigned-issuer
  namespace: @NS@
spec:
  selfSigned: {}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  annotations:
    cert-manager.io/inject-ca-from: @NS@/@PREFIX@-serving-cert
  labels:
    cluster.x-k8s.io/provider: @PROVIDER@
  name: @PREFIX@-validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: @PREFIX@-webhook-service
      namespace: @NS@
      path: /validate-@GROUP@
  failurePolicy: Fail
  matchPolicy: Equivalent
  name: validation.@GROUP@
  rules:
  - apiGroups:
    - @GROUP@
    apiVersions:
    - @VERSION@
    operations:
    - CREATE
    - UPDATE
    resources:
    - '*'
  sideEffects: None
`
