// A synthetic fleet shared by the collector benchmarks: services, instances, client versions and extension
// ids, with what each instance advertises and each client version declares. Deterministic (seeded).

export const EXTENSIONS = Array.from({ length: 20 }, (_, index) =>
  index < 4
    ? ['io.modelcontextprotocol/tasks', 'io.modelcontextprotocol/ui', 'io.modelcontextprotocol/sampling-tools', 'io.modelcontextprotocol/elicitation-url'][
        index
      ]
    : `com.vendor${index % 5}.mcp/feature-${index}`,
);

export function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 10 client names × 5 versions; each declares 3-6 of the 20 ids. */
export function clientVersions(random) {
  const names = ['claude-desktop', 'claude-code', 'cursor', 'vscode-copilot', 'windsurf', 'zed', 'goose', 'continue', 'cline', 'inspector'];
  const result = [];
  for (const name of names) {
    for (let version = 0; version < 5; version++) {
      const declared = new Set();
      const wanted = 3 + Math.floor(random() * 4);
      while (declared.size < wanted) declared.add(EXTENSIONS[Math.floor(random() * EXTENSIONS.length)]);
      result.push({ name, version: `${1 + Math.floor(version / 2)}.${version}.0`, declared: [...declared] });
    }
  }
  return result;
}

/** `services` services × `perService` instances; a service advertises 8 ids and is used by `clientsPerService` client versions. */
export function fleet({ services = 20, perService = 25, clientsPerService = 10, seed = 42 } = {}) {
  const random = rng(seed);
  const clients = clientVersions(random);
  const instances = [];
  for (let s = 0; s < services; s++) {
    const advertised = new Set();
    while (advertised.size < 8) advertised.add(EXTENSIONS[Math.floor(random() * EXTENSIONS.length)]);
    const used = new Set();
    while (used.size < Math.min(clientsPerService, clients.length)) used.add(Math.floor(random() * clients.length));
    for (let i = 0; i < perService; i++) {
      instances.push({
        service: `service-${s}`,
        instanceId: `${s.toString(16).padStart(4, '0')}-${i.toString(16).padStart(4, '0')}-4bd1-9c1e-${(s * 1000 + i).toString(16).padStart(12, '0')}`,
        host: `host-${s}-${i}`,
        serverName: `mcp-server-${s}`,
        advertised: [...advertised],
        clients: [...used].map((index) => clients[index]),
      });
    }
  }
  return { instances, clients };
}
