package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the hdfs dfs forms turn into, checked without a cluster: URIs, dash commands, count and df lines. */
class HdfsFormsTest {
  private static CliContext context(StrataConf conf) {
    return new CliContext(conf, System.in, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), Clock.systemUTC(),
        ZoneOffset.UTC, false, c -> {
          throw new AssertionError("no client in this test");
        });
  }

  @Test
  void parse_splitsStrataUris_andRefusesOtherSchemes() {
    assertThat(CliPaths.parse("strata://m1:7000/a//b/")).isEqualTo(new CliPaths.Argument("m1:7000", "/a/b"));
    assertThat(CliPaths.parse("strata:///a")).isEqualTo(new CliPaths.Argument(null, "/a"));
    assertThat(CliPaths.parse("strata:/a/b")).isEqualTo(new CliPaths.Argument(null, "/a/b"));
    assertThat(CliPaths.parse("STRATA://m1:7000")).isEqualTo(new CliPaths.Argument("m1:7000", "/"));
    assertThat(CliPaths.parse("strata://zk@z1:2181,z2:2181/x"))
        .isEqualTo(new CliPaths.Argument("zk@z1:2181,z2:2181", "/x"));
    assertThat(CliPaths.parse("a/b:c")).isEqualTo(new CliPaths.Argument(null, "/a/b:c")); // colon after a slash
    assertThat(CliPaths.parse("/d/*.bin")).isEqualTo(new CliPaths.Argument(null, "/d/*.bin"));
    assertThatThrownBy(() -> CliPaths.parse("hdfs://nn:8020/a"))
        .hasMessage("Wrong FS: the scheme is hdfs, not strata (strata fs takes plain paths and strata:// URIs)");
    assertThatThrownBy(() -> CliPaths.parse("file:/tmp/a")).hasMessageStartingWith("Wrong FS: the scheme is file,");
    assertThatThrownBy(() -> CliPaths.parse("strata:a")).hasMessageContaining("needs an absolute path");
  }

  @Test
  void withMaster_replacesTheMasterSettings_byTheAuthoritysForm() {
    StrataConf base = StrataConf.of(Map.of("strata.master.hostname", "old", "strata.master.rpc.port", "1",
        "strata.zookeeper.address", "z:1", "strata.user.block.size.default", "1MB"));
    StrataConf single = CliContext.withMaster(base, "m1:7000");
    assertThat(single.get(CommonKeys.MASTER_HOSTNAME)).isEqualTo("m1");
    assertThat(single.get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(7000);
    assertThat(single.isSet(CommonKeys.ZOOKEEPER_ADDRESS)).isFalse();
    assertThat(single.getRaw("strata.user.block.size.default")).isEqualTo("1MB"); // the rest is kept
    assertThat(CliContext.withMaster(base, "m2").get(CommonKeys.MASTER_RPC_PORT)).isEqualTo(1); // port kept
    StrataConf ha = CliContext.withMaster(base, "a:1,b:2");
    assertThat(ha.get(CommonKeys.MASTER_RPC_ADDRESSES)).containsExactly("a:1", "b:2");
    assertThat(ha.isSet(CommonKeys.ZOOKEEPER_ADDRESS)).isFalse();
    assertThat(CliContext.withMaster(base, "zk@q1:2181,q2:2181").get(CommonKeys.ZOOKEEPER_ADDRESS))
        .isEqualTo("q1:2181,q2:2181");
    for (String bad : List.of("m1:", "m1:99999", ":7", "a:1,b", "zk@q1", "m1:x")) {
      assertThatThrownBy(() -> CliContext.withMaster(base, bad)).as(bad)
          .hasMessageStartingWith("strata://" + bad + ": the authority is not ");
    }
  }

  @Test
  void selectMaster_allowsOneMasterPerRun() {
    CliContext ctx = context(StrataConf.of(Map.of("strata.master.hostname", "old")));
    ctx.selectMaster("M1:7000");
    ctx.selectMaster("m1:7000"); // the same one again, in another case
    assertThat(ctx.masterAddress()).isEqualTo("M1:7000");
    assertThatThrownBy(() -> ctx.selectMaster("m2:7000"))
        .hasMessage("strata://m2:7000 names another master than strata://m1:7000 did: one command works with one master");
    assertThat(context(StrataConf.of(Map.of("strata.zookeeper.address", "z:1"))).masterAddress()).isEqualTo("zk@z:1");
  }

  @Test
  void undash_turnsHdfsDashCommandsIntoNames_only() {
    CliContext ctx = context(StrataConf.defaults());
    assertThat(FsCommand.undash(new String[] {"fs", "-ls", "-R", "/"})).containsExactly("fs", "ls", "-R", "/");
    assertThat(FsCommand.undash(new String[] {"fs", "-copyFromLocal", "a", "/b"}))
        .containsExactly("fs", "copyFromLocal", "a", "/b");
    assertThat(FsCommand.undash(new String[] {"fs", "-help"})).containsExactly("fs", "help");
    assertThat(FsCommand.undash(new String[] {"fs", "-usage", "ls"})).containsExactly("fs", "help", "ls");
    assertThat(FsCommand.undash(new String[] {"fs", "-h"})).containsExactly("fs", "-h"); // fs's own option
    assertThat(FsCommand.undash(new String[] {"fs", "-nope"})).containsExactly("fs", "-nope");
    assertThat(FsCommand.undash(new String[] {"fsadmin", "-report"})).containsExactly("fsadmin", "-report");
  }

  @Test
  void aRunBuildsOnlyTheFsCommandItNames_helpAndUnknownNamesBuildThemAll() {
    CliContext ctx = context(StrataConf.defaults());
    assertThat(StrataCli.commandLine(ctx, "ls").getSubcommands().get("fs").getSubcommands().keySet())
        .containsExactly("help", "ls");
    java.util.Set<String> all = StrataCli.commandLine(ctx).getSubcommands().get("fs").getSubcommands().keySet();
    assertThat(all).contains("help", "ls", "copyFromLocal", "checksum").hasSize(41);
    assertThat(StrataCli.commandLine(ctx, "nope").getSubcommands().get("fs").getSubcommands().keySet())
        .isEqualTo(all);
    assertThat(StrataCli.commandLine(ctx, "help").getSubcommands().get("fs").getSubcommands().keySet())
        .isEqualTo(all);
  }

  @Test
  void aRunBuildsOnlyTheTopLevelCommandItNames_helpAndUnknownNamesBuildThemAll() {
    CliContext ctx = context(StrataConf.defaults());
    assertThat(StrataCli.forLine(ctx, new String[] {"fs", "ls", "/"}).getSubcommands().keySet()).containsExactly("fs");
    assertThat(StrataCli.forLine(ctx, new String[] {"fs", "ls", "/"}).getSubcommands().get("fs").getSubcommands()
        .keySet()).containsExactly("help", "ls");
    assertThat(StrataCli.forLine(ctx, new String[] {"version"}).getSubcommands().keySet()).containsExactly("version");
    assertThat(StrataCli.forLine(ctx, new String[] {"fsadmin", "report"}).getSubcommands().keySet())
        .containsExactly("fsadmin");
    java.util.List<String> all = java.util.List.of("fs", "fsadmin", "bench", "version", "logLevel");
    assertThat(StrataCli.forLine(ctx, new String[] {"--help"}).getSubcommands().keySet()).containsExactlyElementsOf(all);
    assertThat(StrataCli.forLine(ctx, new String[] {"nope"}).getSubcommands().keySet()).containsExactlyElementsOf(all);
    assertThat(StrataCli.forLine(ctx, new String[0]).getSubcommands().keySet()).containsExactlyElementsOf(all);
  }

  @Test
  void countLine_hasHdfsColumns() {
    assertThat(SummaryCommands.countLine(3, 2, 1515, "/t", false, false))
        .isEqualTo("           3            2               1515 /t");
    assertThat(SummaryCommands.countLine(3, 2, 1536, "/t", true, true))
        .isEqualTo("        none             inf            none             inf            3            2"
            + "              1.5 K /t");
  }

  @Test
  void dfLines_alignLikeHdfs_andRoundThePercent() {
    assertThat(SummaryCommands.dfLines("strata://localhost:19998", 1000, 125, false)).containsExactly(
        "Filesystem               Size Used Available Use%",
        "strata://localhost:19998 1000  125       875  13%");
    assertThat(SummaryCommands.dfLines("strata://h:1", 3L << 30, 1L << 29, true)).containsExactly(
        "Filesystem   Size  Used Available Use%",
        "strata://h:1  3 G 512 M     2.5 G  17%");
    assertThat(SummaryCommands.dfLines("strata://h:1", 0, 0, false).get(1)).endsWith("   0%");
  }
}
