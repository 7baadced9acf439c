package io.strata.worker.store;

import java.util.List;
import java.util.Locale;

/**
 * Chooses the dir a new block goes to, among the dirs of one tier. The block store asks tier by tier,
 * from the top, and calls the evictor when no tier has room; the allocator itself only chooses.
 *
 * <p>Contract: {@link #allocate} returns one of {@code dirs} (the same object) that {@link DirView#isGood
 * is good} and has {@link DirView#availableBytes()} {@code >= bytes}, or null when none has. It never
 * changes the dirs; reserving the space is the caller's job. {@code dirs} are in configured order. A
 * negative {@code bytes} is refused with an {@link IllegalArgumentException}.
 *
 * <p>Thread-safety: implementations are thread-safe; stateful ones (round robin) keep their state
 * consistent under concurrent calls. Implementations loaded by {@link #create} need a public no-arg
 * constructor.
 */
public interface Allocator {
  /** A good dir of {@code dirs} with at least {@code bytes} available, or null when none has room. */
  DirView allocate(List<? extends DirView> dirs, long bytes);

  /**
   * A new allocator: "MaxFree", "RoundRobin", "Greedy" (case-insensitive), or the fully qualified name of
   * a class implementing this interface with a public no-arg constructor.
   *
   * @throws IllegalArgumentException naming {@code classNameOrShortName} when it is blank, no such class,
   *     not an Allocator, or cannot be instantiated
   */
  static Allocator create(String classNameOrShortName) {
    if (classNameOrShortName == null || classNameOrShortName.isBlank()) {
      throw new IllegalArgumentException(
          "Allocator must be MaxFree, RoundRobin, Greedy or a class name, got '" + classNameOrShortName + "'");
    }
    String name = classNameOrShortName.trim();
    switch (name.toLowerCase(Locale.ROOT)) {
      case "maxfree":
        return new MaxFreeAllocator();
      case "roundrobin":
        return new RoundRobinAllocator();
      case "greedy":
        return new GreedyAllocator();
      default:
        return PolicyLoader.instantiate("allocator", name, Allocator.class, "MaxFree, RoundRobin, Greedy");
    }
  }
}
