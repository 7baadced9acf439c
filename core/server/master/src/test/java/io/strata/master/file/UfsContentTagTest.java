package io.strata.master.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.id.BlockId;
import io.strata.master.MutableClock;
import io.strata.master.file.MasterReplies.UfsSource;
import io.strata.master.journal.Journal;
import io.strata.master.journal.JournalEntry;
import io.strata.server.ufs.UfsManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The content fingerprint (an object store's ETag) a master records when it loads a file from the UFS is kept by the
 * journal, replay and checkpoints, and handed to the worker that reads the file's blocks from the UFS, which compares
 * it with the file's status then. A file of a UFS that offers none (a local dir) has "": its length and mtime decide.
 * Real masters over real journals and a local-dir UFS; the object-store load is the journal a master wrote for one
 * (no object store is reachable here).
 */
class UfsContentTagTest {
  private static final long BS = 100;
  private static final String ETAG = "\"5d41402abc4b2a76b9719d911017c592\"";

  @TempDir
  Path tmp;

  private FileSystemMaster open(UfsManager manager, Journal journal) throws Exception {
    return FileSystemMasterUfsTest.open(tmp, tmp.resolve("ufs"), manager, journal,
        new MutableClock(1_700_000_000_000L), Map.of(), 1000);
  }

  @Test
  void aLoadedFilesContentTag_survivesReplayAndCheckpoint_andGoesToTheWorkerWithItsBlocks() throws Exception {
    Files.createDirectories(tmp.resolve("ufs/local"));
    Files.write(tmp.resolve("ufs/local/g"), new byte[150]);
    Path journalDir = tmp.resolve("journal");
    Journal written = new Journal(journalDir, 1 << 20);
    written.replay(e -> { }); // a new journal, as a master starts one
    written.startWriting();
    // What a master journals for a file it loaded from a UFS whose status had an ETag (UfsMerge).
    written.append(List.of(new JournalEntry.Mkdir(1, "/s3", 0755, 1_000, "PERSISTED")));
    written.append(List.of(new JournalEntry.CreateFile(2, "/s3/f", BS, 0644, 1_000, "MUST_CACHE"),
        new JournalEntry.CompleteFile(2, 150, 1_000, "PERSISTED", 1_234, ETAG)));
    written.flush();
    written.close();

    try (UfsManager manager = new UfsManager()) {
      Journal journal = new Journal(journalDir, 1 << 20);
      FileSystemMaster fs = open(manager, journal);
      UfsSource replayed = fs.blockSource(BlockId.of(2, 1)).ufs();
      assertThat(replayed.ufsContentTag()).isEqualTo(ETAG);
      assertThat(replayed.ufsMtimeMs()).isEqualTo(1_234);
      assertThat(replayed.fileLength()).isEqualTo(150);
      assertThat(replayed.offset()).isEqualTo(100);
      FileInfo local = fs.getStatus("/local/g", 0); // loaded from the local dir now: no tag there
      assertThat(fs.blockSource(BlockId.of(local.id(), 0)).ufs().ufsContentTag()).isEmpty();
      fs.checkpoint();
      journal.close();

      Journal again = new Journal(journalDir, 1 << 20);
      try {
        FileSystemMaster fromCheckpoint = open(manager, again);
        assertThat(fromCheckpoint.blockSource(BlockId.of(2, 0)).ufs().ufsContentTag()).isEqualTo(ETAG);
        assertThat(fromCheckpoint.getStatus("/s3/f").ufsContentTag()).isEqualTo(ETAG);
        assertThat(fromCheckpoint.blockSource(BlockId.of(local.id(), 1)).ufs().ufsContentTag()).isEmpty();
      } finally {
        again.close();
      }
    }
  }

  /**
   * A rename moves the file in the UFS too, which on an object store is a copy whose ETag may differ: the recorded
   * tags under what moved are dropped (length and mtime decide for them), live and in replay alike, so the next read
   * through or metadata sync does not take Strata's own rename for a change made outside it.
   */
  @Test
  void aRename_dropsTheContentTagsOfWhatMoved_liveAndInReplay() throws Exception {
    Files.createDirectories(tmp.resolve("ufs/s3/d"));
    Files.write(tmp.resolve("ufs/s3/f"), new byte[150]);
    Files.write(tmp.resolve("ufs/s3/d/h"), new byte[20]);
    Files.createDirectories(tmp.resolve("ufs/kept"));
    Files.write(tmp.resolve("ufs/kept/k"), new byte[10]);
    Path journalDir = tmp.resolve("journal");
    Journal written = new Journal(journalDir, 1 << 20);
    written.replay(e -> { });
    written.startWriting();
    written.append(List.of(new JournalEntry.Mkdir(1, "/s3", 0755, 1_000, "PERSISTED"),
        new JournalEntry.Mkdir(2, "/s3/d", 0755, 1_000, "PERSISTED"),
        new JournalEntry.Mkdir(5, "/kept", 0755, 1_000, "PERSISTED")));
    written.append(List.of(new JournalEntry.CreateFile(3, "/s3/f", BS, 0644, 1_000, "MUST_CACHE"),
        new JournalEntry.CompleteFile(3, 150, 1_000, "PERSISTED", 1_234, ETAG)));
    written.append(List.of(new JournalEntry.CreateFile(4, "/s3/d/h", BS, 0644, 1_000, "MUST_CACHE"),
        new JournalEntry.CompleteFile(4, 20, 1_000, "PERSISTED", 1_234, "\"h-etag\"")));
    written.append(List.of(new JournalEntry.CreateFile(6, "/kept/k", BS, 0644, 1_000, "MUST_CACHE"),
        new JournalEntry.CompleteFile(6, 10, 1_000, "PERSISTED", 1_234, "\"k-etag\"")));
    written.flush();
    written.close();

    try (UfsManager manager = new UfsManager()) {
      Journal journal = new Journal(journalDir, 1 << 20);
      FileSystemMaster fs = open(manager, journal);
      assertThat(fs.getStatus("/s3/d/h").ufsContentTag()).isEqualTo("\"h-etag\"");
      fs.rename("/s3", "/moved");
      assertThat(fs.getStatus("/moved/f").ufsContentTag()).isEmpty();
      assertThat(fs.getStatus("/moved/d/h").ufsContentTag()).isEmpty();
      assertThat(fs.blockSource(BlockId.of(3, 0)).ufs().ufsContentTag()).isEmpty();
      assertThat(fs.getStatus("/kept/k").ufsContentTag()).as("what did not move keeps its tag").isEqualTo("\"k-etag\"");
      assertThat(tmp.resolve("ufs/moved/d/h")).hasSize(20); // the UFS still holds the bytes, moved
      journal.close();

      Journal again = new Journal(journalDir, 1 << 20);
      try {
        FileSystemMaster replayed = open(manager, again);
        assertThat(replayed.getStatus("/moved/f").ufsContentTag()).isEmpty();
        assertThat(replayed.getStatus("/moved/d/h").ufsContentTag()).isEmpty();
        assertThat(replayed.getStatus("/kept/k").ufsContentTag()).isEqualTo("\"k-etag\"");
      } finally {
        again.close();
      }
    }
  }
}
