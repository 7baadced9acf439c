package io.strata.worker.store;

import java.nio.file.Path;
import java.util.List;

/**
 * The configuration of one tier: its alias, its dirs with their quotas, and whether commits and moves
 * into it are fsynced ({@link Durability}); by default every tier but {@code MEM} is, since a MEM tier
 * lives on a tmpfs that a crash empties anyway. Immutable.
 */
public record TierSpec(String alias, List<Dir> dirs, boolean fsync) {
  /** One dir of the tier. */
  public record Dir(Path path, long quota) {}

  public TierSpec {
    dirs = List.copyOf(dirs);
    if (dirs.isEmpty()) {
      throw new IllegalArgumentException("Tier " + alias + " has no dirs");
    }
  }

  /** A tier fsynced unless it is the memory tier ({@link #defaultFsync}). */
  public TierSpec(String alias, List<Dir> dirs) {
    this(alias, dirs, defaultFsync(alias));
  }

  /** Whether a tier of this alias is fsynced by default: every tier but {@code MEM}. */
  public static boolean defaultFsync(String alias) {
    return !"MEM".equalsIgnoreCase(alias);
  }
}
