/**
 * countingContainers: `containers` wrapped so that every read of a container's `resources` is
 * counted: a test says how many times a computation read a pod's resources (a count is
 * behaviour: "classing the same spec again reads nothing").
 */
export function countingContainers<C extends object>(containers: C[]): { containers: C[]; reads: () => number } {
  let reads = 0;
  const wrapped = containers.map(
    (c) =>
      new Proxy(c, {
        get(target, prop, receiver) {
          if (prop === 'resources') reads++;
          return Reflect.get(target, prop, receiver);
        },
      }),
  );
  return { containers: wrapped, reads: () => reads };
}
