package io.strata.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.strata.client.options.CreateDirectoryOptions;
import io.strata.client.options.CreateFileOptions;
import io.strata.client.options.DeleteOptions;
import io.strata.client.options.GetStatusOptions;
import io.strata.client.options.ListStatusOptions;
import io.strata.client.options.MountOptions;
import io.strata.client.options.OpenFileOptions;
import io.strata.client.options.ReadType;
import io.strata.client.options.SetAttributeOptions;
import io.strata.client.options.TtlAction;
import io.strata.client.options.WriteType;
import io.strata.common.conf.StrataConf;
import io.strata.proto.FileInfoProto;
import io.strata.proto.MountInfoProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The client's new keys, option objects and proto conversions. */
class ClientConfigTest {
  private static StrataConf conf(String key, String value) {
    return StrataConf.of(Map.of(key, value));
  }

  @Test
  void defaults_areAsyncThroughCacheNeverResyncAndPassiveCaching() {
    StrataConf d = StrataConf.defaults();
    assertThat(ClientKeys.writeTypeDefault(d)).isEqualTo(WriteType.ASYNC_THROUGH);
    assertThat(ClientKeys.readTypeDefault(d)).isEqualTo(ReadType.CACHE);
    assertThat(ClientKeys.metadataSyncIntervalMs(d)).isEqualTo(-1);
    assertThat(d.get(ClientKeys.PASSIVE_CACHE_ENABLED)).isTrue();
  }

  @Test
  void syncInterval_acceptsMinusOneZeroAndDurations() {
    String key = ClientKeys.METADATA_SYNC_INTERVAL.name();
    assertThat(ClientKeys.metadataSyncIntervalMs(conf(key, "0"))).isEqualTo(0);
    assertThat(ClientKeys.metadataSyncIntervalMs(conf(key, " -1 "))).isEqualTo(-1);
    assertThat(ClientKeys.metadataSyncIntervalMs(conf(key, "5min"))).isEqualTo(300_000);
    assertThat(ClientKeys.metadataSyncIntervalMs(conf(key, "750"))).isEqualTo(750);
  }

  @Test
  void syncInterval_refusesOtherNegativesAndWords_namingTheKey() {
    String key = ClientKeys.METADATA_SYNC_INTERVAL.name();
    assertThatThrownBy(() -> ClientKeys.metadataSyncIntervalMs(conf(key, "-2")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(key);
    assertThatThrownBy(() -> ClientKeys.metadataSyncIntervalMs(conf(key, "sometimes")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(key);
  }

  @Test
  void badWriteOrReadType_failsNamingTheValidValues() {
    assertThatThrownBy(() -> ClientKeys.writeTypeDefault(conf(ClientKeys.WRITE_TYPE_DEFAULT.name(), "cache_through")))
        .hasMessageContaining("MUST_CACHE, CACHE_THROUGH, THROUGH, ASYNC_THROUGH");
    assertThatThrownBy(() -> ClientKeys.readTypeDefault(conf(ClientKeys.READ_TYPE_DEFAULT.name(), "ALWAYS")))
        .hasMessageContaining("NO_CACHE, CACHE, CACHE_PROMOTE");
  }

  @Test
  void writeTypes_sayWhichStreamsTheyUse() {
    assertThat(WriteType.MUST_CACHE.cachesBlocks()).isTrue();
    assertThat(WriteType.MUST_CACHE.writesUfs()).isFalse();
    assertThat(WriteType.ASYNC_THROUGH.writesUfs()).isFalse();
    assertThat(WriteType.CACHE_THROUGH.cachesBlocks()).isTrue();
    assertThat(WriteType.CACHE_THROUGH.writesUfs()).isTrue();
    assertThat(WriteType.THROUGH.cachesBlocks()).isFalse();
    assertThat(WriteType.THROUGH.writesUfs()).isTrue();
  }

  @Test
  void options_leaveTypesAndSyncUnset_untilSet_andKeepOtherFields() {
    assertThat(CreateFileOptions.defaults().writeType()).isEmpty();
    CreateFileOptions c = CreateFileOptions.defaults().withBlockSize(1024).withWriteType(WriteType.THROUGH)
        .withMode(0600);
    assertThat(c.writeType()).contains(WriteType.THROUGH);
    assertThat(c.blockSize()).isEqualTo(1024);
    assertThat(c.withWriteType(null).writeType()).isEmpty();
    assertThat(CreateDirectoryOptions.defaults().withRecursive(true).withWriteType(WriteType.CACHE_THROUGH)
        .recursive()).isTrue();
    assertThat(OpenFileOptions.defaults().readType()).isEmpty();
    assertThat(OpenFileOptions.defaults().withReadType(ReadType.NO_CACHE).readType()).contains(ReadType.NO_CACHE);
    assertThat(GetStatusOptions.defaults().syncIntervalMs()).isEmpty();
    assertThat(GetStatusOptions.defaults().withSyncIntervalMs(0).syncIntervalMs()).hasValue(0);
    ListStatusOptions l = ListStatusOptions.defaults().withSyncIntervalMs(-1).withRecursive(true);
    assertThat(l.syncIntervalMs()).hasValue(-1);
    assertThat(l.recursive()).isTrue();
    assertThatThrownBy(() -> GetStatusOptions.defaults().withSyncIntervalMs(-5))
        .isInstanceOf(IllegalArgumentException.class);
    DeleteOptions del = DeleteOptions.defaults().withStrataOnly(true).withRecursive(true);
    assertThat(del.strataOnly()).isTrue();
    assertThat(DeleteOptions.defaults().strataOnly()).isFalse();
  }

  @Test
  void setAttributeOptions_setOnlyWhatIsAsked() {
    SetAttributeOptions none = SetAttributeOptions.defaults();
    assertThat(none.pinned()).isEmpty();
    assertThat(none.ttlMs()).isEmpty();
    assertThat(none.ttlAction()).isEmpty();
    SetAttributeOptions ttl = none.withTtlMs(10_000).withTtlAction(TtlAction.FREE);
    assertThat(ttl.ttlMs()).hasValue(10_000);
    assertThat(ttl.ttlAction()).contains(TtlAction.FREE);
    assertThat(ttl.pinned()).isEmpty();
    assertThat(none.withTtlMs(SetAttributeOptions.NO_TTL).ttlMs()).hasValue(-1);
    assertThatThrownBy(() -> none.withTtlMs(-2)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void toStatus_mapsThePersistenceFields_andReadsAnEmptyStateAsNotPersisted() {
    URIStatus s = ProtoConverter.toStatus(FileInfoProto.newBuilder().setId(5).setPath("/m/f").setName("f")
        .setPersistenceState("TO_BE_PERSISTED").setPinned(true).setTtlMs(60_000).setTtlAction("FREE")
        .setUfsPath("hdfs://nn/x/f").setMountPoint(false).build());
    assertThat(s.persistenceState()).isEqualTo(URIStatus.TO_BE_PERSISTED);
    assertThat(s.isPersisted()).isFalse();
    assertThat(s.pinned()).isTrue();
    assertThat(s.ttlMs()).isEqualTo(60_000);
    assertThat(s.ttlAction()).isEqualTo("FREE");
    assertThat(s.ufsPath()).isEqualTo("hdfs://nn/x/f");
    URIStatus bare = ProtoConverter.toStatus(FileInfoProto.newBuilder().setPath("/g").setMountPoint(true).build());
    assertThat(bare.persistenceState()).isEqualTo(URIStatus.NOT_PERSISTED);
    assertThat(bare.mountPoint()).isTrue();
  }

  @Test
  void mounts_convertBothWays() {
    MountOptions o = MountOptions.defaults().withReadOnly(true).withShared(true)
        .withProperties(Map.of("fs.s3a.access.key", "AK"));
    MountInfoProto p = ProtoConverter.toMountProto("/s3", "s3a://b/d", o);
    assertThat(p.getReadOnly()).isTrue();
    assertThat(p.getShared()).isTrue();
    assertThat(p.getOptionsMap()).containsEntry("fs.s3a.access.key", "AK");
    MountInfo m = ProtoConverter.toMount(p);
    assertThat(m).isEqualTo(new MountInfo("/s3", "s3a://b/d", true, true, Map.of("fs.s3a.access.key", "AK")));
  }
}
