package io.strata.shadedtests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Hadoop 3.4 program as a user runs it: its own JVM whose classpath is what {@code bin/strata classpath}
 * prints followed by Hadoop's client jars (hadoop-client-api, hadoop-client-runtime and the slf4j API they
 * need) and an empty Hadoop configuration dir, and no other setting: Hadoop's {@code FsShell} ({@code hadoop fs ...}) on {@code strata://} paths
 * against a cluster started by bin/strata-start.sh.
 */
class HadoopProgramIT {
  @TempDir
  static Path tmp;
  private static ScriptCluster cluster;
  private static String classpath;

  @BeforeAll
  static void start() throws Exception {
    cluster = ScriptCluster.start(tmp);
    ScriptCluster.Result cp = cluster.strata("classpath");
    assertThat(cp.exit()).as(cp.err()).isZero();
    List<String> entries = new ArrayList<>(List.of(cp.out().trim()));
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(e).getFileName().toString();
      if (name.startsWith("hadoop-client-api-") || name.startsWith("hadoop-client-runtime-")
          || name.startsWith("slf4j-api-")) {
        entries.add(e);
      }
    }
    assertThat(entries).as("the shaded jar and Hadoop's three client jars").hasSize(4);
    // As `hadoop fs` runs: with a configuration dir on the classpath (FsShell refuses to start without a
    // core-site.xml). It is empty: nothing in it is about Strata.
    Path conf = java.nio.file.Files.createDirectories(tmp.resolve("hadoop-conf"));
    java.nio.file.Files.writeString(conf.resolve("core-site.xml"), "<?xml version=\"1.0\"?>\n<configuration/>\n");
    entries.add(conf.toString());
    classpath = String.join(File.pathSeparator, entries);
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static ScriptCluster.Result hadoopFs(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classpath, "org.apache.hadoop.fs.FsShell"));
    argv.addAll(Arrays.asList(args));
    return cluster.run(argv);
  }

  @Test
  void fsShell_putLsCatMvDuRm_onStrataUris() throws Exception {
    String root = cluster.uri();
    Path local = tmp.resolve("local.bin");
    byte[] data = new byte[2 * 1024 * 1024 + 99];
    new Random(3).nextBytes(data);
    Files.write(local, data);

    ScriptCluster.Result mkdir = hadoopFs("-mkdir", "-p", root + "/hfs/in");
    assertThat(mkdir.exit()).as(mkdir.err()).isZero();
    ScriptCluster.Result put = hadoopFs("-put", local.toString(), root + "/hfs/in/data.bin");
    assertThat(put.exit()).as(put.err()).isZero();

    ScriptCluster.Result ls = hadoopFs("-ls", root + "/hfs/in");
    assertThat(ls.exit()).as(ls.err()).isZero();
    assertThat(ls.out()).contains("Found 1 items").contains(Integer.toString(data.length))
        .contains(root + "/hfs/in/data.bin");

    Path back = tmp.resolve("back.bin");
    ScriptCluster.Result get = hadoopFs("-get", root + "/hfs/in/data.bin", back.toString());
    assertThat(get.exit()).as(get.err()).isZero();
    assertThat(Files.readAllBytes(back)).isEqualTo(data);

    ScriptCluster.Result mv = hadoopFs("-mv", root + "/hfs/in/data.bin", root + "/hfs/moved.bin");
    assertThat(mv.exit()).as(mv.err()).isZero();
    ScriptCluster.Result du = hadoopFs("-du", "-s", root + "/hfs");
    assertThat(du.exit()).as(du.err()).isZero();
    assertThat(du.out()).startsWith(Integer.toString(data.length));

    ScriptCluster.Result gone = hadoopFs("-cat", root + "/hfs/in/data.bin");
    assertThat(gone.exit()).isEqualTo(1);
    assertThat(gone.err()).contains("No such file or directory");

    ScriptCluster.Result rm = hadoopFs("-rm", "-r", root + "/hfs");
    assertThat(rm.exit()).as(rm.err()).isZero();
    ScriptCluster.Result after = hadoopFs("-test", "-e", root + "/hfs");
    assertThat(after.exit()).isEqualTo(1);
    // And Strata's own CLI agrees.
    assertThat(cluster.strata("fs", "test", "-e", "/hfs").exit()).isEqualTo(1);
  }
}
