package io.strata.shuffle;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the seal rounds of a shuffle left: every sealed file per partition (all epochs, in epoch order),
 * and the partitions with a lost epoch. Immutable; sent to executors inside the driver's answer.
 */
public record SealedShuffle(Map<Integer, List<String>> files, Set<Integer> lost) implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
}
