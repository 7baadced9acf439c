package io.strata.shuffle;

import io.strata.client.URIStatus;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the seal rounds of a shuffle left: every sealed file per partition (all epochs, in epoch order),
 * the status with blocks of each sealed file the driver could get (by path; a reader opens a file without
 * one by its path), and the partitions with a lost epoch. Immutable.
 */
public record SealedShuffle(Map<Integer, List<String>> files, Map<String, URIStatus> statuses, Set<Integer> lost)
    implements java.io.Serializable {
  private static final long serialVersionUID = 2L;

  /** Without statuses. */
  public SealedShuffle(Map<Integer, List<String>> files, Set<Integer> lost) {
    this(files, Map.of(), lost);
  }
}
