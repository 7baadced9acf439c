package io.strata.worker.shortcircuit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether a block's file lives on a memory file system (tmpfs, ramfs), which a short-circuit OPEN tells the
 * client: only such a file may be read through a mapping. A disk's read error under a mapping is a SIGBUS,
 * which ends the client's JVM where a channel read throws an IOException it can fail over from; so what
 * decides is the file system the bytes are on, never the name of the tier (a tier called MEM may be
 * configured on a disk). Asked once per directory (finding a path's file system reads the mount table),
 * so it holds one answer per block directory; a directory that cannot be asked counts as not in memory.
 *
 * <p>Thread-safe: a concurrent map, shared by the connections of one server.
 */
final class MemoryFileSystems {
  /** File system types whose files are pages of memory. */
  private static final Set<String> MEMORY_TYPES = Set.of("tmpfs", "ramfs");

  private final Map<Path, Boolean> byDir = new ConcurrentHashMap<>();

  /** Whether {@code file} (a block file, or a temp block's) is on a memory file system. */
  boolean holds(Path file) {
    Path dir = file.toAbsolutePath().getParent();
    if (dir == null) {
      return false;
    }
    return byDir.computeIfAbsent(dir, MemoryFileSystems::ask);
  }

  private static boolean ask(Path dir) {
    try {
      return MEMORY_TYPES.contains(Files.getFileStore(dir).type().toLowerCase(Locale.ROOT));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
