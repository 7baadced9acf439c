package io.strata.worker.store;

import java.nio.file.Path;
import java.util.List;

/** The configuration of one tier: its alias and its dirs with their quotas. Immutable. */
public record TierSpec(String alias, List<Dir> dirs) {
  /** One dir of the tier. */
  public record Dir(Path path, long quota) {}

  public TierSpec {
    dirs = List.copyOf(dirs);
    if (dirs.isEmpty()) {
      throw new IllegalArgumentException("Tier " + alias + " has no dirs");
    }
  }
}
