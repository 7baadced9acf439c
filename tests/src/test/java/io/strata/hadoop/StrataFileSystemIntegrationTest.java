package io.strata.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.minicluster.LocalStrataCluster;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * strata:// through Hadoop's own entry points (FileSystem.get with the service file, FileContext with
 * StrataFs) on a real two-worker cluster: the authority forms, {@code strata.} keys reaching the client,
 * block locations naming the workers that hold each block, the error types Hadoop users catch, streamed
 * listings past one page, content summaries and stream statistics. The contract suites (module
 * tests/hadoop-contract) cover the rest.
 */
class StrataFileSystemIntegrationTest {
  private static final int MB = 1 << 20;
  private static LocalStrataCluster cluster;
  private static URI uri;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalStrataCluster.builder().workers(2).set("strata.worker.tier.0.quota", "64MB").build().start();
    uri = URI.create("strata://localhost:" + cluster.masterPort() + "/");
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A Hadoop configuration with no fs.strata.impl (the service file finds the class) and no FS cache. */
  private static Configuration conf() {
    Configuration c = new Configuration();
    c.setBoolean("fs.strata.impl.disable.cache", true);
    c.set("strata.user.block.size.default", "1MB");
    return c;
  }

  private static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem fs, Path p, byte[] data) throws IOException {
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(data);
    }
  }

  private static byte[] read(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return in.readAllBytes();
    }
  }

  @Test
  void serviceFile_findsStrataFileSystem_andCloseReleasesTheSharedClient() throws IOException {
    FileSystem fs = FileSystem.get(uri, conf());
    assertThat(fs).isInstanceOf(StrataFileSystem.class);
    assertThat(fs.getScheme()).isEqualTo("strata");
    assertThat(fs.getUri()).isEqualTo(uri);
    io.strata.client.FileSystem client = ((StrataFileSystem) fs).client();
    FileSystem second = FileSystem.get(uri, conf());
    assertThat(((StrataFileSystem) second).client()).isSameAs(client);
    assertThat(io.strata.client.FileSystem.Factory.references(client)).isEqualTo(2);
    second.close();
    assertThat(io.strata.client.FileSystem.Factory.references(client)).isEqualTo(1);
    fs.close();
    assertThat(io.strata.client.FileSystem.Factory.references(client)).isZero();
  }

  /**
   * A file system closed while one of its output streams is still open completes that file with every byte written,
   * as HDFS does; an aborted stream's file is not completed; a stream the program closes later says it is closed.
   */
  @Test
  void close_completesTheFilesOfStreamsLeftOpen() throws IOException {
    byte[] data = bytes(3 << 20, 41); // three blocks
    Path left = new Path("/left-open/f");
    Path aborted = new Path("/left-open/aborted");
    FileSystem fs = FileSystem.get(uri, conf());
    FSDataOutputStream out = fs.create(left, true);
    out.write(data);
    FSDataOutputStream abort = fs.create(aborted, true);
    abort.write(data, 0, 1000);
    ((org.apache.hadoop.fs.Abortable) abort.getWrappedStream()).abort();
    fs.close();

    try (FileSystem again = FileSystem.get(uri, conf())) {
      assertThat(again.getFileStatus(left).getLen()).isEqualTo(data.length);
      assertThat(read(again, left)).isEqualTo(data);
      assertThat(again.exists(aborted)).as("an aborted write is not completed").isFalse();
    }
    assertThatThrownBy(() -> out.write(1)).isInstanceOf(IOException.class).hasMessageContaining("closed");
    out.close(); // closing it again is harmless
  }

  @Test
  void authority_listOfMasters_pollsForTheLeader() throws IOException {
    // A dead address first: the client polls the list and finds the live master.
    int dead;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      dead = s.getLocalPort();
    }
    URI list = URI.create("strata://localhost:" + dead + ",localhost:" + cluster.masterPort() + "/");
    try (FileSystem fs = FileSystem.get(list, conf())) {
      assertThat(((StrataFileSystem) fs).client().conf().getRaw("strata.master.rpc.addresses"))
          .isEqualTo("localhost:" + dead + ",localhost:" + cluster.masterPort());
      Path p = new Path("/authority/list/f");
      write(fs, p, bytes(1000, 1));
      assertThat(read(fs, p)).isEqualTo(bytes(1000, 1));
      assertThat(fs.getFileStatus(p).getPath().toUri().getAuthority()).isEqualTo(list.getAuthority());
    }
  }

  @Test
  void noAuthority_usesTheConfiguredMaster_fromStrataKeysOfTheHadoopConf() throws IOException {
    Configuration c = conf();
    c.set("strata.master.hostname", "localhost");
    c.set("strata.master.rpc.port", Integer.toString(cluster.masterPort()));
    try (FileSystem fs = FileSystem.get(URI.create("strata:///"), c)) {
      Path p = new Path("/authority/none/f");
      write(fs, p, bytes(10, 2));
      assertThat(fs.getFileStatus(p).getLen()).isEqualTo(10);
      assertThat(fs.getFileStatus(p).getPath().toString()).isEqualTo("strata:/authority/none/f");
    }
  }

  @Test
  void strataKeys_reachTheClient_blockSizeAndWriteType() throws IOException {
    Configuration c = conf();
    c.set("strata.user.block.size.default", "2MB");
    c.set("strata.user.file.writetype.default", "MUST_CACHE");
    c.set("not.strata.key", "x");
    try (FileSystem fs = FileSystem.get(uri, c)) {
      io.strata.common.conf.StrataConf client = ((StrataFileSystem) fs).client().conf();
      assertThat(client.getRaw("strata.user.block.size.default")).isEqualTo("2MB");
      assertThat(client.getRaw("not.strata.key")).isNull();
      Path p = new Path("/keys/f");
      write(fs, p, bytes(5 * MB, 3));
      assertThat(fs.getFileStatus(p).getBlockSize()).isEqualTo(2 * MB);
      assertThat(fs.getDefaultBlockSize(p)).isEqualTo(2 * MB);
      assertThat(fs.getFileBlockLocations(p, 0, 5 * MB)).hasSize(3);
      assertThat(((StrataFileSystem) fs).client().getStatus("/keys/f").persistenceState())
          .isEqualTo("NOT_PERSISTED"); // MUST_CACHE: never persisted
    }
  }

  @Test
  void badAuthorities_failWithMessagesNamingTheUri() {
    assertThatThrownBy(() -> FileSystem.get(URI.create("strata://localhost:notaport/"), conf()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("strata://localhost:notaport/")
        .hasMessageContaining("is not host:port");
    assertThatThrownBy(() -> FileSystem.get(URI.create("strata://bob@localhost:19998/"), conf()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a user name is not part of it");
    assertThatThrownBy(() -> FileSystem.get(URI.create("strata://a:1,b:0/"), conf()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("port 0 in 'b:0'");
  }

  @Test
  void blockLocations_nameTheWorkersHoldingEachBlock() throws IOException {
    Set<String> workerNames = cluster.workers().stream().map(w -> "localhost:" + w.rpcPort())
        .collect(Collectors.toSet());
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path p = new Path("/locality/f");
      write(fs, p, bytes(3 * MB + 10, 4));
      FileStatus st = fs.getFileStatus(p);
      BlockLocation[] all = fs.getFileBlockLocations(st, 0, st.getLen());
      assertThat(all).extracting(BlockLocation::getOffset).containsExactly(0L, (long) MB, 2L * MB, 3L * MB);
      assertThat(all).extracting(BlockLocation::getLength).containsExactly((long) MB, (long) MB, (long) MB, 10L);
      for (BlockLocation b : all) {
        assertThat(b.getHosts()).containsOnly("localhost").isNotEmpty();
        assertThat(b.getNames()).isNotEmpty().allSatisfy(n -> assertThat(workerNames).contains(n));
      }
      // A range inside the second block names only it; past the end nothing.
      assertThat(fs.getFileBlockLocations(st, MB + 5, 10)).extracting(BlockLocation::getOffset)
          .containsExactly((long) MB);
      assertThat(fs.getFileBlockLocations(st, st.getLen(), 10)).isEmpty();
      assertThatThrownBy(() -> fs.getFileBlockLocations(st, -1, 10)).isInstanceOf(IllegalArgumentException.class);
      // listLocatedStatus carries the same locations.
      RemoteIterator<org.apache.hadoop.fs.LocatedFileStatus> it = fs.listLocatedStatus(new Path("/locality"));
      assertThat(it.hasNext()).isTrue();
      assertThat(it.next().getBlockLocations()).hasSize(4);
    }
  }

  @Test
  void blockLocations_ofAPersistedFileNoWorkerCaches_haveNoHosts() throws IOException {
    Configuration c = conf();
    c.set("strata.user.file.writetype.default", "CACHE_THROUGH");
    try (FileSystem fs = FileSystem.get(uri, c)) {
      Path p = new Path("/locality/persisted");
      write(fs, p, bytes(2 * MB, 5));
      io.strata.client.FileSystem client = ((StrataFileSystem) fs).client();
      assertThat(client.getStatus("/locality/persisted").isPersisted()).isTrue();
      assertThat(client.free("/locality/persisted", false, false).blocksFreed()).isEqualTo(2);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> {
        for (BlockLocation b : fs.getFileBlockLocations(p, 0, 2 * MB)) {
          if (b.getHosts().length > 0) {
            return false;
          }
        }
        return true;
      });
      BlockLocation[] blocks = fs.getFileBlockLocations(p, 0, 2 * MB);
      assertThat(blocks).hasSize(2);
      assertThat(blocks[1].getNames()).isEmpty();
      assertThat(read(fs, p)).isEqualTo(bytes(2 * MB, 5)); // read from the under file system
    }
  }

  @Test
  void fileContext_throughStrataFs() throws IOException {
    Configuration c = conf();
    c.set("fs.AbstractFileSystem.strata.impl", StrataFs.class.getName());
    FileContext fc = FileContext.getFileContext(uri, c);
    Path dir = new Path(uri.resolve("/fc"));
    fc.mkdir(dir, FsPermission.getDirDefault(), true);
    Path f = new Path(dir, "a");
    try (FSDataOutputStream out = fc.create(f, EnumSet.of(CreateFlag.CREATE), Options.CreateOpts.createParent())) {
      out.write(bytes(3000, 6));
    }
    assertThat(fc.getFileStatus(f).getLen()).isEqualTo(3000);
    // FileContext applies its own umask once: with 000, what is asked is what is made (not masked again by 022).
    fc.setUMask(new FsPermission((short) 0));
    Path open = new Path(dir, "open");
    fc.mkdir(new Path(dir, "opendir"), new FsPermission((short) 0777), false);
    try (FSDataOutputStream out = fc.create(open, EnumSet.of(CreateFlag.CREATE),
        Options.CreateOpts.perms(new FsPermission((short) 0666)))) {
      out.write(1);
    }
    assertThat(fc.getFileStatus(open).getPermission().toShort()).isEqualTo((short) 0666);
    assertThat(fc.getFileStatus(new Path(dir, "opendir")).getPermission().toShort()).isEqualTo((short) 0777);
    fc.delete(open, false);
    fc.delete(new Path(dir, "opendir"), false);
    fc.rename(f, new Path(dir, "b"), Options.Rename.NONE);
    try (FSDataInputStream in = fc.open(new Path(dir, "b"))) {
      assertThat(in.readAllBytes()).isEqualTo(bytes(3000, 6));
    }
    assertThat(fc.util().listStatus(dir)).extracting(s -> s.getPath().getName()).containsExactly("b");
    assertThatThrownBy(() -> fc.getFileStatus(f)).isInstanceOf(FileNotFoundException.class);
    assertThat(fc.delete(dir, true)).isTrue();
    assertThat(fc.util().exists(dir)).isFalse();
  }

  @Test
  void errors_areTheTypesHadoopUsersCatch() throws IOException {
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path dir = new Path("/errors");
      Path file = new Path(dir, "f");
      write(fs, file, bytes(100, 7));
      assertThatThrownBy(() -> fs.open(new Path(dir, "missing"))).isInstanceOf(FileNotFoundException.class)
          .hasMessageContaining("/errors/missing");
      assertThatThrownBy(() -> fs.open(dir)).isInstanceOf(FileNotFoundException.class)
          .hasMessageContaining("is a directory");
      assertThatThrownBy(() -> fs.create(file, false)).isInstanceOf(FileAlreadyExistsException.class)
          .hasMessageContaining("/errors/f");
      assertThatThrownBy(() -> fs.create(new Path(file, "child"))).isInstanceOf(ParentNotDirectoryException.class)
          .hasMessageContaining("/errors/f is a file");
      assertThatThrownBy(() -> fs.mkdirs(new Path(file, "sub/dir"))).isInstanceOf(ParentNotDirectoryException.class);
      assertThatThrownBy(() -> fs.mkdirs(file)).isInstanceOf(FileAlreadyExistsException.class);
      assertThatThrownBy(() -> fs.delete(dir, false)).isInstanceOf(PathIsNotEmptyDirectoryException.class)
          .hasMessageContaining("/errors");
      assertThatThrownBy(() -> fs.append(file)).isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("does not support append");
      assertThatThrownBy(() -> fs.createNonRecursive(new Path("/errors/nodir/f"), true, 4096, (short) 1, MB, null))
          .isInstanceOf(FileNotFoundException.class).hasMessageContaining("parent directory does not exist");
      try (FSDataInputStream in = fs.open(file)) {
        assertThatThrownBy(() -> in.seek(101)).isInstanceOf(EOFException.class).hasMessageContaining("/errors/f");
        assertThatThrownBy(() -> in.seek(-1)).isInstanceOf(EOFException.class);
        assertThatThrownBy(() -> in.readFully(90, new byte[20])).isInstanceOf(EOFException.class);
        assertThat(in.read(100, new byte[1], 0, 1)).isEqualTo(-1);
      }
      assertThat(fs.delete(new Path("/errors/missing"), true)).isFalse();
      assertThat(fs.rename(new Path("/errors/missing"), new Path("/errors/x"))).isFalse();
      assertThatThrownBy(() -> fs.getFileStatus(new Path("/errors/missing")))
          .isInstanceOf(FileNotFoundException.class).hasMessageContaining("File does not exist");
    }
  }

  @Test
  void rename_hdfsSemantics_intoDirectoryMovesUnder_ontoFileReturnsFalse() throws IOException {
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path a = new Path("/rename/a");
      Path b = new Path("/rename/b");
      Path d = new Path("/rename/d");
      write(fs, a, bytes(10, 8));
      write(fs, b, bytes(20, 9));
      fs.mkdirs(d);
      assertThat(fs.rename(a, b)).isFalse();
      assertThat(fs.getFileStatus(b).getLen()).isEqualTo(20);
      assertThat(fs.rename(a, d)).isTrue();
      assertThat(fs.getFileStatus(new Path(d, "a")).getLen()).isEqualTo(10);
      assertThat(fs.rename(d, new Path(d, "inside"))).isFalse();
      assertThat(fs.rename(b, new Path("/rename/nodir/b"))).isFalse();
    }
  }

  @Test
  void listStatusIterator_streamsADirectoryLargerThanOnePage_inNameOrder() throws IOException {
    int n = StreamedListing.PAGE + 17;
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      io.strata.client.FileSystem client = ((StrataFileSystem) fs).client();
      client.createDirectory("/big");
      for (int i = 0; i < n; i++) {
        client.createFile(String.format("/big/f%05d", i)).close();
      }
      List<String> names = new ArrayList<>();
      RemoteIterator<FileStatus> it = fs.listStatusIterator(new Path("/big"));
      while (it.hasNext()) {
        names.add(it.next().getPath().getName());
      }
      assertThat(names).hasSize(n).isSorted().startsWith("f00000").endsWith(String.format("f%05d", n - 1));
      assertThat(fs.listStatus(new Path("/big"))).hasSize(n);
      assertThatThrownBy(() -> fs.listStatusIterator(new Path("/big-missing")))
          .isInstanceOf(FileNotFoundException.class);
      ContentSummary cs = fs.getContentSummary(new Path("/big"));
      assertThat(cs.getFileCount()).isEqualTo(n);
      assertThat(cs.getDirectoryCount()).isEqualTo(1);
      assertThat(cs.getLength()).isZero();
    }
  }

  @Test
  void attributes_ownerModeTimes_areStoredAndShownInStatuses() throws IOException {
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path p = new Path("/attrs/f");
      write(fs, p, bytes(10, 10));
      String user = org.apache.hadoop.security.UserGroupInformation.getCurrentUser().getShortUserName();
      assertThat(fs.getFileStatus(p).getOwner()).isEqualTo(user);
      fs.setOwner(p, "alice", "analysts");
      fs.setPermission(p, new FsPermission((short) 0640));
      fs.setTimes(p, 1_000_000L, 2_000_000L);
      FileStatus st = fs.getFileStatus(p);
      assertThat(st.getOwner()).isEqualTo("alice");
      assertThat(st.getGroup()).isEqualTo("analysts");
      assertThat(st.getPermission().toShort()).isEqualTo((short) 0640);
      assertThat(st.getModificationTime()).isEqualTo(1_000_000L);
      assertThat(st.getAccessTime()).isEqualTo(2_000_000L);
      fs.setTimes(p, -1, 3_000_000L);
      assertThat(fs.getFileStatus(p).getModificationTime()).isEqualTo(1_000_000L);
      assertThatThrownBy(() -> fs.setOwner(p, null, null)).isInstanceOf(IOException.class);
      assertThatThrownBy(() -> fs.setPermission(new Path("/attrs/missing"), FsPermission.getFileDefault()))
          .isInstanceOf(FileNotFoundException.class);
    }
  }

  @Test
  void streams_declareCapabilitiesTruthfully_andCountBytesInIoStatistics() throws IOException {
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path p = new Path("/stats/f");
      try (FSDataOutputStream out = fs.create(p, true)) {
        assertThat(out.hasCapability(StreamCapabilities.HFLUSH)).isFalse();
        assertThat(out.hasCapability(StreamCapabilities.HSYNC)).isFalse();
        out.write(bytes(12345, 11));
        out.hflush(); // accepted, publishes nothing
        assertThat(fs.open(p).read()).isEqualTo(-1); // not visible before close
        assertThat(IOStatisticsSupport.retrieveIOStatistics(out).counters())
            .containsEntry(StreamStatisticNames.STREAM_WRITE_BYTES, 12345L);
      }
      try (FSDataInputStream in = fs.open(p)) {
        assertThat(in.hasCapability(StreamCapabilities.UNBUFFER)).isTrue();
        assertThat(in.hasCapability(StreamCapabilities.READBYTEBUFFER)).isTrue();
        byte[] got = new byte[12345];
        in.readFully(0, got, 0, 100);
        in.seek(100);
        in.readFully(got, 100, 12245);
        assertThat(got).isEqualTo(bytes(12345, 11));
        in.unbuffer();
        in.seek(0);
        java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(10);
        assertThat(in.read(direct)).isEqualTo(10);
        assertThat(IOStatisticsSupport.retrieveIOStatistics(in).counters())
            .containsEntry(StreamStatisticNames.STREAM_READ_BYTES, 12355L);
      }
    }
  }

  @Test
  void overwrite_replacesTheFile_andChangesItsEtag() throws IOException {
    try (FileSystem fs = FileSystem.get(uri, conf())) {
      Path p = new Path("/etag/f");
      write(fs, p, bytes(8, 12));
      String first = ((org.apache.hadoop.fs.EtagSource) fs.getFileStatus(p)).getEtag();
      long start = System.nanoTime();
      write(fs, p, bytes(8, 13));
      long ms = (System.nanoTime() - start) / 1_000_000;
      String second = ((org.apache.hadoop.fs.EtagSource) fs.getFileStatus(p)).getEtag();
      assertThat(second).isNotEqualTo(first).isNotEmpty();
      assertThat(read(fs, p)).isEqualTo(bytes(8, 13));
      assertThat(ms).as("overwrite took %d ms", ms).isLessThan(5_000);
    }
  }

  @Test
  void open_seesAFileCompletedSinceItsIncompleteStatusWasCached() throws Exception {
    Configuration c = conf();
    c.setBoolean("strata.user.metadata.cache.enabled", true);
    c.set("strata.user.metadata.cache.expiry", "10min");
    byte[] data = bytes(3000, 41);
    Path p = new Path("/cached-incomplete");
    try (FileSystem reader = FileSystem.get(uri, c); FileSystem writer = FileSystem.get(uri, conf())) {
      FSDataOutputStream out = writer.create(p, true);
      out.write(data);
      assertThat(reader.getFileStatus(p).getLen()).isZero(); // cached while its writer has it open
      out.close();
      try (FSDataInputStream in = reader.open(p)) {
        assertThat(in.readAllBytes()).isEqualTo(data);
      }
    }
  }
}
