import pytest

from crowdsafe.engines.spark.session import spark_session
from crowdsafe.errors import ParameterError

pytestmark = pytest.mark.spark


def test_active_session_is_reused(spark):
    assert spark_session() is spark
    assert spark_session("local[2]") is spark
    with pytest.raises(ParameterError, match="already active"):
        spark_session("local[7]")
