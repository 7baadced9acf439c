package io.strata.cli;

import io.strata.client.ClusterInfo;
import io.strata.client.URIStatus;
import io.strata.client.WorkerInfo;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The text the CLI prints: {@code ls} lines laid out like {@code hdfs dfs -ls}, {@code stat} as
 * {@code key=value} lines, sizes in bytes or in hdfs's human form ({@code 1.5 G}), and the
 * {@code fsadmin report}. Pure functions of their arguments (time zone and "now" are passed in), so tests
 * check them without a cluster. Stateless and thread-safe.
 */
final class Formats {
  private static final DateTimeFormatter LS_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm", Locale.ROOT);
  private static final DateTimeFormatter STAT_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT).withZone(ZoneOffset.UTC);

  private Formats() {}

  /**
   * Bytes the way {@code hdfs dfs -du -h} prints them: plain below 1024 ({@code 512}), else one decimal
   * in binary units with the decimal dropped when the value is whole ({@code 1 K}, {@code 1.5 G}).
   */
  static String humanSize(long bytes) {
    return io.strata.common.format.Sizes.human(bytes);
  }

  /** {@code drwxr-xr-x} / {@code -rw-r--r--}, with {@code t} for the sticky bit. */
  static String permissions(boolean directory, int mode) {
    StringBuilder b = new StringBuilder(10);
    b.append(directory ? 'd' : '-');
    String rwx = "rwx";
    for (int shift = 6; shift >= 0; shift -= 3) {
      for (int bit = 0; bit < 3; bit++) {
        b.append((mode >> (shift + 2 - bit) & 1) != 0 ? rwx.charAt(bit) : '-');
      }
    }
    if ((mode & 01000) != 0) {
      b.setCharAt(9, b.charAt(9) == 'x' ? 't' : 'T');
    }
    return b.toString();
  }

  /** The mode as octal digits without a leading zero: {@code 644}, {@code 1777}. */
  static String octalMode(int mode) {
    return Integer.toOctalString(mode & 07777);
  }

  /**
   * {@code ls} lines for {@code entries}, with columns as wide as their widest value, as hdfs lays them
   * out (replication at least 3 wide, length at least 10): {@code
   * drwxr-xr-x   - owner group          0 2026-12-01 19:50 /path}. Files show replication 1.
   */
  static List<String> lsLines(List<URIStatus> entries, ZoneId zone, boolean human) {
    return lsLines(entries, zone, human, false);
  }

  /**
   * As {@link #lsLines(List, ZoneId, boolean)}; with {@code persistence} ({@code ls -l}) an extra column
   * before the path holds the persistence state, as wide as the widest:
   * {@code -rw-r--r--   1 owner group       1366 2026-12-01 19:50 PERSISTED     /path/f}.
   */
  static List<String> lsLines(List<URIStatus> entries, ZoneId zone, boolean human, boolean persistence) {
    int replWidth = 3;
    int stateWidth = 0;
    int lenWidth = 10;
    int ownerWidth = 0;
    int groupWidth = 0;
    for (URIStatus s : entries) {
      ownerWidth = Math.max(ownerWidth, s.owner().length());
      groupWidth = Math.max(groupWidth, s.group().length());
      lenWidth = Math.max(lenWidth, size(s.length(), human).length());
      stateWidth = Math.max(stateWidth, s.persistenceState().length());
    }
    List<String> lines = new ArrayList<>(entries.size());
    DateTimeFormatter time = LS_TIME.withZone(zone);
    for (URIStatus s : entries) {
      lines.add(permissions(s.directory(), s.mode())
          + " " + padLeft(s.directory() ? "-" : "1", replWidth)
          + " " + padRight(s.owner(), ownerWidth)
          + " " + padRight(s.group(), groupWidth)
          + " " + padLeft(size(s.length(), human), lenWidth)
          + " " + time.format(Instant.ofEpochMilli(s.modificationTimeMs()))
          + (persistence ? " " + padRight(s.persistenceState(), stateWidth) : "")
          + " " + s.path());
    }
    return lines;
  }

  private static String size(long bytes, boolean human) {
    return human ? humanSize(bytes) : Long.toString(bytes);
  }

  /** The number of blocks a file of this length has: all full but the last. */
  static long blockCount(URIStatus s) {
    if (s.directory() || s.length() == 0 || s.blockSize() <= 0) {
      return 0;
    }
    return (s.length() + s.blockSize() - 1) / s.blockSize();
  }

  /** Milliseconds since the epoch as {@code 2026-12-01T19:50:00.000Z}. */
  static String isoTime(long epochMs) {
    return io.strata.common.format.Times.iso(epochMs);
  }

  /**
   * The default {@code stat} output, one {@code key=value} per line: path, type, length, block_size,
   * complete, mode, owner, group, modification_time, creation_time, id, blocks (files only), persistence
   * (NOT_PERSISTED, TO_BE_PERSISTED, PERSISTED or LOST), pinned, ttl_ms (-1 when none), ttl_action,
   * ufs_path (empty when not under a mount), mount_point.
   */
  static List<String> statLines(URIStatus s) {
    List<String> lines = new ArrayList<>();
    lines.add("path=" + s.path());
    lines.add("type=" + (s.directory() ? "directory" : "file"));
    lines.add("length=" + s.length());
    lines.add("block_size=" + s.blockSize());
    lines.add("complete=" + s.complete());
    lines.add("mode=" + octalMode(s.mode()));
    lines.add("owner=" + s.owner());
    lines.add("group=" + s.group());
    lines.add("modification_time=" + isoTime(s.modificationTimeMs()));
    lines.add("creation_time=" + isoTime(s.creationTimeMs()));
    lines.add("id=" + s.id());
    if (s.isFile()) {
      lines.add("blocks=" + blockCount(s));
    }
    lines.add("persistence=" + s.persistenceState());
    lines.add("pinned=" + s.pinned());
    lines.add("ttl_ms=" + s.ttlMs());
    lines.add("ttl_action=" + s.ttlAction());
    lines.add("ufs_path=" + s.ufsPath());
    lines.add("mount_point=" + s.mountPoint());
    return lines;
  }

  /**
   * {@code stat FORMAT} as hdfs reads it: %a octal mode, %A symbolic mode, %b length, %F type
   * ({@code regular file} or {@code directory}), %g group, %n name, %o block size, %r replication,
   * %u owner, %y modification time ({@code yyyy-MM-dd HH:mm:ss}, UTC), %Y modification time in ms,
   * %% a percent sign. Any other character, and \n, \t escapes, print as written.
   */
  static String formatStat(String format, URIStatus s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c == '\\' && i + 1 < format.length() && (format.charAt(i + 1) == 'n' || format.charAt(i + 1) == 't')) {
        b.append(format.charAt(++i) == 'n' ? '\n' : '\t');
        continue;
      }
      if (c != '%' || i + 1 == format.length()) {
        b.append(c);
        continue;
      }
      char spec = format.charAt(++i);
      switch (spec) {
        case 'a': b.append(octalMode(s.mode())); break;
        case 'A': b.append(permissions(s.directory(), s.mode())); break;
        case 'b': b.append(s.length()); break;
        case 'F': b.append(s.directory() ? "directory" : "regular file"); break;
        case 'g': b.append(s.group()); break;
        case 'n': b.append(s.name().isEmpty() ? s.path() : s.name()); break;
        case 'o': b.append(s.blockSize()); break;
        case 'r': b.append(s.directory() ? 0 : 1); break;
        case 'u': b.append(s.owner()); break;
        case 'y': b.append(STAT_TIME.format(Instant.ofEpochMilli(s.modificationTimeMs()))); break;
        case 'Y': b.append(s.modificationTimeMs()); break;
        case '%': b.append('%'); break;
        default: b.append('%').append(spec); break;
      }
    }
    return b.toString();
  }

  /** A {@code mount} table line: {@code <ufs_uri> on <path> (readonly=<b>, shared=<b>)}. */
  static String mountLine(io.strata.client.MountInfo m) {
    return m.ufsUri() + " on " + m.path() + " (readonly=" + m.readOnly() + ", shared=" + m.shared() + ")";
  }

  /** A {@code checksum} line: the MD5 in hex, two spaces, the path (as md5sum prints it). */
  static String checksumLine(String md5Hex, String path) {
    return md5Hex + "  " + path;
  }

  /** A {@code du} line: the size, two spaces, the path. */
  static String duLine(long bytes, String path, boolean human) {
    return size(bytes, human) + "  " + path;
  }

  /** {@code fsadmin report}: the summary, then one line per live and per lost worker. */
  static List<String> report(ClusterInfo info, List<WorkerInfo> live, String masterAddress, long nowMs) {
    List<String> lines = new ArrayList<>();
    lines.add("Master: " + masterAddress);
    lines.add("Live workers: " + info.liveWorkers());
    lines.add("Lost workers: " + info.lostWorkers());
    lines.add("Capacity: " + bytesAndHuman(info.capacityBytes()));
    lines.add("Used: " + bytesAndHuman(info.usedBytes()));
    lines.add("Available: " + bytesAndHuman(Math.max(0, info.capacityBytes() - info.usedBytes())));
    lines.add("Files: " + info.fileCount());
    lines.add("Directories: " + info.directoryCount());
    lines.add("Blocks: " + info.blockCount());
    for (WorkerInfo w : live) {
      lines.add("worker id=" + w.id() + " address=" + w.address() + " capacity=" + w.capacityBytes()
          + " used=" + w.usedBytes() + " blocks=" + w.blockCount()
          + " last_heartbeat=" + Math.max(0, nowMs - w.lastHeartbeatMs()) + "ms");
      lines.addAll(storageLines(w));
    }
    for (WorkerInfo w : info.lost()) {
      lines.add("lost worker id=" + w.id() + " address=" + w.address());
    }
    return lines;
  }

  /**
   * A worker's storage: one {@code tier} line per tier (capacity and usage of its good dirs, lost blocks),
   * then one {@code dir} line per dir in the fixed form other tools parse:
   * {@code dir worker=<host:port> tier=<alias> path=<path> state=<OK|BAD> capacity=<bytes> used=<bytes>}.
   */
  static List<String> storageLines(WorkerInfo w) {
    List<String> lines = new ArrayList<>();
    java.util.Map<Integer, long[]> tiers = new java.util.TreeMap<>();
    java.util.Map<Integer, String> aliases = new java.util.HashMap<>();
    for (io.strata.client.StorageDirInfo d : w.dirs()) {
      long[] t = tiers.computeIfAbsent(d.tierOrdinal(), k -> new long[4]);
      aliases.put(d.tierOrdinal(), d.tier());
      if (d.good()) {
        t[0] += d.capacityBytes();
        t[1] += d.usedBytes();
      } else {
        t[3]++;
      }
      t[2] += d.lostBlocks();
    }
    for (java.util.Map.Entry<Integer, long[]> e : tiers.entrySet()) {
      long[] t = e.getValue();
      lines.add("  tier worker=" + w.address() + " tier=" + aliases.get(e.getKey()) + " capacity=" + t[0]
          + " used=" + t[1] + " bad_dirs=" + t[3] + " lost_blocks=" + t[2]);
    }
    for (io.strata.client.StorageDirInfo d : w.dirs()) {
      lines.add("dir worker=" + w.address() + " tier=" + d.tier() + " path=" + d.path() + " state="
          + (d.good() ? "OK" : "BAD") + " capacity=" + d.capacityBytes() + " used=" + d.usedBytes()
          + (d.lostBlocks() > 0 ? " lost_blocks=" + d.lostBlocks() : ""));
    }
    return lines;
  }

  /** {@code 1610612736 (1.5 G)}. */
  static String bytesAndHuman(long bytes) {
    return io.strata.common.format.Sizes.bytesAndHuman(bytes);
  }

  private static String padLeft(String s, int width) {
    return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
  }

  private static String padRight(String s, int width) {
    return s.length() >= width ? s : s + " ".repeat(width - s.length());
  }
}
