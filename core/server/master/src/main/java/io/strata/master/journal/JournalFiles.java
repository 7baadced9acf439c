package io.strata.master.journal;

import io.strata.proto.journal.JournalEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal directory's layout and the file operations on it: {@code VERSION} (marks a formatted
 * journal), {@code CLUSTER_ID} (made at format; workers keep it with their blocks), {@code segments/<first sequence, 20 digits>.log} and {@code checkpoints/<sequence>.ckpt}
 * (written to a temp name, fsynced, then renamed, so a checkpoint file is always whole); formatting,
 * the version check, naming and listing, and dropping what a checkpoint covers.
 *
 * <p>Stateless; safe from any thread (the {@link Journal} decides who writes what when).
 */
final class JournalFiles {
  private static final Logger LOG = LoggerFactory.getLogger(JournalFiles.class);
  static final String VERSION = "strata-journal 1\n";
  /** The file holding the journal's cluster id (one line). */
  static final String CLUSTER_ID = "CLUSTER_ID";

  private JournalFiles() {}

  /** True when the dir holds journal entries or checkpoints. */
  static boolean hasContent(Path dir) throws IOException {
    for (String sub : List.of("segments", "checkpoints")) {
      Path p = dir.resolve(sub);
      if (Files.isDirectory(p)) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
          if (s.iterator().hasNext()) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Initialises an empty journal; refuses to wipe one that holds entries unless {@code force}. */
  static void format(Path dir, boolean force) throws IOException {
    boolean wiping = hasContent(dir);
    if (wiping && !force) {
      throw new IOException("The journal at " + dir + " holds entries; formatting would erase the namespace. "
          + "Use --force to wipe it.");
    }
    for (String sub : List.of("segments", "checkpoints")) {
      Path p = dir.resolve(sub);
      if (Files.isDirectory(p)) {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
          for (Path f : s) {
            Files.delete(f);
          }
        }
      }
    }
    // A wiped journal starts its epochs again too: none of the old leaders' entries remain to void.
    Files.deleteIfExists(dir.resolve("EPOCHS"));
    Files.createDirectories(dir.resolve("segments"));
    Files.createDirectories(dir.resolve("checkpoints"));
    // Entries wiped make a new cluster: workers holding blocks of the old one are refused (block ids start again).
    // A journal without entries keeps its id (a standby may have read it; no block can belong to it yet).
    if (wiping) {
      Files.deleteIfExists(dir.resolve(CLUSTER_ID));
    }
    String id = clusterId(dir);
    Files.writeString(dir.resolve("VERSION"), VERSION, StandardCharsets.UTF_8);
    LOG.info("Formatted the journal at {} (cluster {})", dir, id);
  }

  /**
   * The cluster id of the journal at {@code dir} ({@code CLUSTER_ID}), created when missing (a format, or a journal
   * written before cluster ids existed). Created whole and once: written to a temp name, synced, then linked to its
   * name, which fails when another master sharing the dir created it first; that one is read then.
   */
  static String clusterId(Path dir) throws IOException {
    Path f = dir.resolve(CLUSTER_ID);
    if (!Files.exists(f)) {
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, CLUSTER_ID, ".tmp");
      try {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
          ch.write(ByteBuffer.wrap((java.util.UUID.randomUUID() + "\n").getBytes(StandardCharsets.UTF_8)));
          ch.force(true);
        }
        try {
          Files.createLink(f, tmp);
        } catch (UnsupportedOperationException | java.nio.file.FileSystemException noLinks) {
          if (noLinks instanceof java.nio.file.FileAlreadyExistsException raced) {
            throw raced;
          }
          Files.move(tmp, f); // a file system without hard links: refuses too when the name exists
        }
        syncDir(dir);
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // another master created it first: that one stands
      } finally {
        Files.deleteIfExists(tmp);
      }
    }
    String id = Files.readString(f, StandardCharsets.UTF_8).trim();
    if (id.isEmpty()) {
      throw new CorruptJournalException(f + " is empty: the journal's cluster id is lost; refusing to start (workers "
          + "check it before their blocks are trusted)");
    }
    return id;
  }

  /**
   * Checks the VERSION marker, formatting a missing or empty dir first; a dir with journal files but no
   * marker, or another version, is refused.
   */
  static void checkVersion(Path dir) throws IOException {
    if (!Files.exists(dir.resolve("VERSION"))) {
      if (Files.isDirectory(dir) && hasContent(dir)) {
        throw new CorruptJournalException(dir + " holds journal files but no VERSION marker: not a journal "
            + "this master wrote; refusing to start");
      }
      format(dir, false);
    }
    String version = Files.readString(dir.resolve("VERSION"), StandardCharsets.UTF_8);
    if (!version.equals(VERSION)) {
      throw new CorruptJournalException(dir + "/VERSION says '" + version.trim() + "', expected '"
          + VERSION.trim() + "'");
    }
  }

  static Path segmentsDir(Path dir) {
    return dir.resolve("segments");
  }

  static Path checkpointsDir(Path dir) {
    return dir.resolve("checkpoints");
  }

  /** Segment {@code <first sequence, 20 digits>.log}, created (and its dir synced) if new; open to append. */
  static FileChannel openSegment(Path dir, long firstSeq) throws IOException {
    Path segmentsDir = segmentsDir(dir);
    Files.createDirectories(segmentsDir);
    Path p = segmentsDir.resolve(String.format("%020d.log", firstSeq));
    FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND);
    syncDir(segmentsDir);
    return ch;
  }

  /**
   * Writes checkpoint {@code <seq>.ckpt} whole: a temp name, fsync, atomic rename, dir fsync. The records are
   * streamed ({@link RecordFile#write}): {@code protos} may be made one at a time as they are written.
   */
  static void writeCheckpoint(Path dir, long seq, Iterable<JournalEntryProto> protos) throws IOException {
    Path checkpointsDir = checkpointsDir(dir);
    Files.createDirectories(checkpointsDir);
    Path tmp = checkpointsDir.resolve(seq + ".ckpt.tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      RecordFile.write(ch, protos, RecordFile.WRITE_BUFFER);
      ch.force(true);
    }
    Files.move(tmp, checkpointsDir.resolve(seq + ".ckpt"), StandardCopyOption.ATOMIC_MOVE);
    syncDir(checkpointsDir);
  }

  /** Removes the segments that end at or before {@code seq} and the checkpoints older than {@code seq}. */
  static void removeCoveredBy(Path dir, long seq) throws IOException {
    TreeMap<Long, Path> segments = numbered(segmentsDir(dir), ".log");
    List<Long> starts = new ArrayList<>(segments.keySet());
    for (int i = 0; i + 1 < starts.size(); i++) {
      if (starts.get(i + 1) - 1 <= seq) {
        Files.deleteIfExists(segments.get(starts.get(i)));
      }
    }
    for (Path old : numbered(checkpointsDir(dir), ".ckpt").headMap(seq, false).values()) {
      Files.deleteIfExists(old);
    }
  }

  static TreeMap<Long, Path> numbered(Path d, String suffix) throws IOException {
    TreeMap<Long, Path> out = new TreeMap<>();
    if (!Files.isDirectory(d)) {
      return out;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
      for (Path p : s) {
        String name = p.getFileName().toString();
        if (name.endsWith(suffix)) {
          try {
            out.put(Long.parseLong(name.substring(0, name.length() - suffix.length())), p);
          } catch (NumberFormatException e) {
            LOG.warn("Ignoring {} in the journal: not a journal file name", p);
          }
        }
      }
    }
    return out;
  }

  static void syncDir(Path d) {
    try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems cannot fsync a directory; the data files themselves are synced.
      LOG.debug("Cannot fsync dir {}: {}", d, e.toString());
    }
  }
}
